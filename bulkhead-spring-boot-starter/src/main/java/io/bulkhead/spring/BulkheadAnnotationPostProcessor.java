package io.bulkhead.spring;

import io.bulkhead.BulkheadRegistry;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import org.springframework.aop.framework.autoproxy.AbstractBeanFactoryAwareAdvisingPostProcessor;
import org.springframework.aop.support.AopUtils;
import org.springframework.aop.support.DefaultPointcutAdvisor;
import org.springframework.aop.support.annotation.AnnotationMatchingPointcut;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.ConfigurableBeanFactory;
import org.springframework.core.MethodIntrospector;
import org.springframework.core.annotation.AnnotationUtils;
import org.springframework.util.function.SingletonSupplier;

/**
 * Proxies every bean with a {@link Bulkhead @Bulkhead} method, after checking each such method
 * ({@link BulkheadMethodInterceptor#check}), so that a wrong name or an unsupported return type
 * stops start-up at the bean that has it rather than failing its first call. It is a post-processor
 * of its own, like the one behind {@code @Async}, so it works whether or not the application uses
 * AspectJ.
 */
final class BulkheadAnnotationPostProcessor extends AbstractBeanFactoryAwareAdvisingPostProcessor {

  private static final long serialVersionUID = 1L;

  private transient BulkheadMethodInterceptor interceptor;
  private final transient Set<Class<?>> withoutAnnotation = ConcurrentHashMap.newKeySet();

  BulkheadAnnotationPostProcessor() {
    setBeforeExistingAdvisors(true); // the slot is held around other advice (a transaction, say)
    setProxyTargetClass(true); // a controller keeps its class, so its request mappings still apply
  }

  @Override
  public void setBeanFactory(BeanFactory beanFactory) {
    super.setBeanFactory(beanFactory);
    // Looked up on first use, not now: a post-processor is created before the beans it would need.
    ObjectProvider<BulkheadRegistry> registry = beanFactory.getBeanProvider(BulkheadRegistry.class);
    ObjectProvider<BulkheadMethodAdapter> adapters =
        beanFactory.getBeanProvider(BulkheadMethodAdapter.class);
    Supplier<List<BulkheadMethodAdapter>> orderedAdapters =
        SingletonSupplier.of(() -> adapters.orderedStream().toList());
    ClassLoader classLoader =
        beanFactory instanceof ConfigurableBeanFactory configurable
            ? configurable.getBeanClassLoader()
            : null;
    interceptor =
        new BulkheadMethodInterceptor(
            SingletonSupplier.of(registry::getObject), orderedAdapters, classLoader);
    advisor =
        new DefaultPointcutAdvisor(
            new AnnotationMatchingPointcut(null, Bulkhead.class, true), interceptor);
  }

  @Override
  public Object postProcessAfterInitialization(Object bean, String beanName) {
    if (bean instanceof BulkheadRegistry || bean instanceof BulkheadMethodAdapter) {
      return bean; // needed to check the others; never annotated themselves
    }
    Class<?> targetClass = AopUtils.getTargetClass(bean);
    if (!withoutAnnotation.contains(targetClass)
        && AnnotationUtils.isCandidateClass(targetClass, Bulkhead.class)) {
      boolean annotated =
          !MethodIntrospector.selectMethods(
                  targetClass,
                  (MethodIntrospector.MetadataLookup<Boolean>)
                      m -> interceptor.check(m) ? Boolean.TRUE : null)
              .isEmpty();
      if (!annotated) {
        withoutAnnotation.add(targetClass); // a prototype bean's class is not searched again
      }
    }
    return super.postProcessAfterInitialization(bean, beanName);
  }
}
