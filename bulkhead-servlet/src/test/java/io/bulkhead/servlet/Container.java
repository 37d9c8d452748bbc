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
import org.apache.tomcat.util.descriptor.web.FilterDef;
import org.apache.tomcat.util.descriptor.web.FilterMap;
import org.eclipse.jetty.ee10.servlet.FilterHolder;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
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
    Running start(Filter first, Filter bulkheads, HttpServlet app, boolean asyncFirst,
        boolean asyncServlet) throws Exception {
      Path baseDir = Files.createTempDirectory("bulkhead-servlet-tomcat");
      Tomcat tomcat = new Tomcat();
      tomcat.setBaseDir(baseDir.toString());
      Connector connector = new Connector();
      connector.setPort(0);
      connector.setProperty("address", "127.0.0.1");
      tomcat.getService().addConnector(connector);
      tomcat.setConnector(connector);
      Context context = tomcat.addContext("", baseDir.toString());
      addFilter(context, "first", first, asyncFirst, "REQUEST", "ASYNC");
      addFilter(context, "bulkheads", bulkheads, true, "REQUEST", "ASYNC");
      Tomcat.addServlet(context, "app", app).setAsyncSupported(asyncServlet);
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

    private static void addFilter(Context context, String name, Filter filter, boolean async,
        String... dispatchers) {
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
    Running start(Filter first, Filter bulkheads, HttpServlet app, boolean asyncFirst,
        boolean asyncServlet) throws Exception {
      QueuedThreadPool pool = new QueuedThreadPool(32, 4);
      pool.setName("jetty-ee10");
      Server server = new Server(pool);
      ServerConnector connector = new ServerConnector(server, 1, 1);
      connector.setHost("127.0.0.1");
      connector.setPort(0);
      server.addConnector(connector);
      ServletContextHandler context = new ServletContextHandler("/");
      FilterHolder firstHolder = new FilterHolder(first);
      firstHolder.setAsyncSupported(asyncFirst);
      context.addFilter(firstHolder, "/*",
          EnumSet.of(DispatcherType.REQUEST, DispatcherType.ASYNC));
      FilterHolder bulkheadHolder = new FilterHolder(bulkheads);
      bulkheadHolder.setAsyncSupported(true);
      context.addFilter(bulkheadHolder, "/*",
          EnumSet.of(DispatcherType.REQUEST, DispatcherType.ASYNC));
      ServletHolder servlet = new ServletHolder(app);
      servlet.setAsyncSupported(asyncServlet);
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
   * Starts the web application. {@code asyncFirst} and {@code asyncServlet} say whether the test's
   * filter and the servlet support async; the filter under test always does.
   */
  abstract Running start(Filter first, Filter bulkheads, HttpServlet app, boolean asyncFirst,
      boolean asyncServlet) throws Exception;
}
