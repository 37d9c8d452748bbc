package io.bulkhead.servlet;

import jakarta.servlet.DispatcherType;
import jakarta.servlet.Filter;
import jakarta.servlet.http.HttpServlet;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.EnumSet;
import org.apache.catalina.Context;
import org.apache.catalina.connector.Connector;
import org.apache.catalina.startup.Tomcat;
import org.apache.coyote.http2.Http2Protocol;
import org.apache.tomcat.util.descriptor.web.FilterDef;
import org.apache.tomcat.util.descriptor.web.FilterMap;
import org.eclipse.jetty.ee10.servlet.FilterHolder;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.http2.server.HTTP2CServerConnectionFactory;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.thread.QueuedThreadPool;

/**
 * The Servlet containers the filter is tested on, each a real server on a loopback port. Both get
 * the same web application: {@code first} (the test's own filter), then the filter under test, both
 * mapped for REQUEST and ASYNC dispatches, then the servlet at {@code /}.
 */
enum Container {
  TOMCAT {
    @Override
    Running start(Filter first, Filter bulkheads, HttpServlet app, Options options)
        throws Exception {
      Path baseDir = Files.createTempDirectory("bulkhead-servlet-tomcat");
      Tomcat tomcat = new Tomcat();
      tomcat.setBaseDir(baseDir.toString());
      Connector connector = new Connector();
      connector.setPort(0);
      connector.setProperty("address", "127.0.0.1");
      if (options.h2c()) {
        connector.addUpgradeProtocol(new Http2Protocol()); // also takes h2c with prior knowledge
      }
      tomcat.getService().addConnector(connector);
      tomcat.setConnector(connector);
      Context context = tomcat.addContext("", baseDir.toString());
      addFilter(context, "first", first, options.asyncFirst(), "REQUEST", "ASYNC");
      addFilter(context, "bulkheads", bulkheads, true, "REQUEST", "ASYNC");
      Tomcat.addServlet(context, "app", app).setAsyncSupported(options.asyncServlet());
      context.addServletMapping("/", "app");
      tomcat.start();
      int port = connector.getLocalPort();
      return new Running() {
        @Override
        public int port() {
          return port;
        }

        @Override
        public void stop() throws Exception {
          tomcat.stop();
          tomcat.destroy();
        }
      };
    }

    private static void addFilter(
        Context context, String name, Filter filter, boolean async, String... dispatchers) {
      FilterDef def = new FilterDef();
      def.setFilterName(name);
      def.setFilter(filter);
      def.setAsyncSupported(Boolean.toString(async));
      context.addFilterDef(def);
      FilterMap map = new FilterMap();
      map.setFilterName(name);
      map.addURLPattern("/*");
      for (String dispatcher : dispatchers) {
        map.setDispatcher(dispatcher);
      }
      context.addFilterMap(map);
    }
  },

  JETTY_EE10 {
    @Override
    Running start(Filter first, Filter bulkheads, HttpServlet app, Options options)
        throws Exception {
      QueuedThreadPool pool = new QueuedThreadPool(32, 4);
      pool.setName("jetty-ee10");
      Server server = new Server(pool);
      HttpConfiguration config = new HttpConfiguration();
      ServerConnector connector =
          options.h2c()
              ? new ServerConnector(server, 1, 1, new HTTP2CServerConnectionFactory(config))
              : new ServerConnector(server, 1, 1, new HttpConnectionFactory(config));
      connector.setHost("127.0.0.1");
      connector.setPort(0);
      server.addConnector(connector);
      ServletContextHandler context = new ServletContextHandler("/");
      FilterHolder firstHolder = new FilterHolder(first);
      firstHolder.setAsyncSupported(options.asyncFirst());
      context.addFilter(
          firstHolder, "/*", EnumSet.of(DispatcherType.REQUEST, DispatcherType.ASYNC));
      FilterHolder bulkheadHolder = new FilterHolder(bulkheads);
      bulkheadHolder.setAsyncSupported(true);
      context.addFilter(
          bulkheadHolder, "/*", EnumSet.of(DispatcherType.REQUEST, DispatcherType.ASYNC));
      ServletHolder servlet = new ServletHolder(app);
      servlet.setAsyncSupported(options.asyncServlet());
      context.addServlet(servlet, "/");
      server.setHandler(context);
      server.start();
      int port = connector.getLocalPort();
      return new Running() {
        @Override
        public int port() {
          return port;
        }

        @Override
        public void stop() throws Exception {
          server.stop();
        }
      };
    }
  };

  /** A started server. */
  interface Running {
    int port();

    void stop() throws Exception;
  }

  /**
   * How the web application is set up: whether the test's filter and the servlet support async (the
   * filter under test always does), and whether the server speaks HTTP/2 without TLS (h2c).
   */
  record Options(boolean asyncFirst, boolean asyncServlet, boolean h2c) {
    static final Options DEFAULT = new Options(true, true, false);
  }

  /** Starts the web application on a loopback port. */
  abstract Running start(Filter first, Filter bulkheads, HttpServlet app, Options options)
      throws Exception;
}
