package io.bulkhead.spring;

import com.zaxxer.hikari.HikariDataSource;
import io.bulkhead.BulkheadRegistry;
import io.bulkhead.config.BulkheadFile;
import io.bulkhead.jdbc.DatabasePools;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.beans.factory.support.RootBeanDefinition;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.ImportBeanDefinitionRegistrar;
import org.springframework.core.env.Environment;
import org.springframework.core.type.AnnotationMetadata;

/**
 * Per-workload {@link DataSource} beans from {@code bulkhead.datasources.*}, when {@code
 * bulkhead-jdbc} and HikariCP are on the class path: each database gets one pool per workload
 * ({@code io.bulkhead.jdbc.DatabasePools}), sized so that together they fit the server's {@code
 * max_connections}, and each pool is a {@code DataSource} bean named {@code <database>.<workload>},
 * to inject with {@code @Qualifier("orders.checkout") DataSource}. Each pool's compartment is in
 * the {@link BulkheadRegistry} under the same name, so its meters and the {@code compartments}
 * endpoint show it.
 *
 * <p>Start-up opens the pools when the database answers, and a total that does not fit what the
 * server allows stops it with the key and the arithmetic. A database that does not answer does not
 * stop the service: it logs one warning, and the pools open (and are checked) when one of its
 * DataSources is first used; until then every {@code getConnection()} throws an {@link
 * java.sql.SQLException} saying why the database could not be reached.
 *
 * <p>These DataSources come before Spring Boot's own, which then backs off; as there are several,
 * nothing that needs a single DataSource ({@code JdbcTemplate}, JPA) is auto-configured on them.
 */
@AutoConfiguration(
    after = BulkheadAutoConfiguration.class,
    beforeName = "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration")
@ConditionalOnClass({DatabasePools.class, HikariDataSource.class})
@Import(BulkheadDataSourceAutoConfiguration.Registrar.class)
public class BulkheadDataSourceAutoConfiguration {

  /** Created by Spring Boot. */
  public BulkheadDataSourceAutoConfiguration() {}

  /**
   * Registers the beans: the bean names come from the configuration, so they are registered as
   * definitions before any bean is made. {@code bulkhead.datasources.<database>} holds the
   * database's pools (it opens them, and closes them with the context); each {@code
   * <database>.<workload>} is a DataSource over one of them.
   */
  static final class Registrar implements ImportBeanDefinitionRegistrar {

    private final Environment environment;
    private final BeanFactory beanFactory;

    /** Spring passes these to the constructor of an import registrar. */
    Registrar(Environment environment, BeanFactory beanFactory) {
      this.environment = environment;
      this.beanFactory = beanFactory;
    }

    @Override
    public void registerBeanDefinitions(
        AnnotationMetadata metadata, BeanDefinitionRegistry registry) {
      // Only the names here, before any bean exists: the settings are checked, with all the
      // others, when the bean of the settings model is made.
      Object databases =
          CompartmentFactory.tree(Binder.get(environment)).getOrDefault("datasources", Map.of());
      names(databases)
          .forEach(
              database -> {
                String poolsBean = BulkheadProperties.PREFIX + ".datasources." + database;
                RootBeanDefinition pools =
                    new RootBeanDefinition(
                        WorkloadDataSources.class,
                        () ->
                            new WorkloadDataSources(
                                beanFactory.getBean(BulkheadFile.class).datasources().stream()
                                    .filter(d -> d.name().equals(database))
                                    .findFirst()
                                    .orElseThrow(),
                                beanFactory.getBean(BulkheadRegistry.class)));
                pools.setInitMethodName("start");
                pools.setDestroyMethodName("close");
                registry.registerBeanDefinition(poolsBean, pools);
                Object settings = ((Map<?, ?>) databases).get(database);
                Object workloads = settings instanceof Map<?, ?> m ? m.get("pools") : null;
                names(workloads)
                    .forEach(
                        workload -> {
                          RootBeanDefinition dataSource =
                              new RootBeanDefinition(
                                  DataSource.class,
                                  () ->
                                      beanFactory
                                          .getBean(poolsBean, WorkloadDataSources.class)
                                          .dataSource(workload));
                          dataSource.setDependsOn(poolsBean);
                          registry.registerBeanDefinition(database + "." + workload, dataSource);
                        });
              });
    }

    /** The names of a section (its keys), in order; none if it is not a mapping. */
    private static List<String> names(@Nullable Object section) {
      List<String> names = new ArrayList<>();
      if (section instanceof Map<?, ?> map) {
        map.keySet().forEach(k -> names.add(String.valueOf(k)));
      }
      return names;
    }
  }
}
