package io.bulkhead;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.concurrent.ThreadFactory;

/**
 * Virtual threads, reached through method handles: the library compiles with {@code --release 17},
 * where {@code Thread.ofVirtual()} does not exist, and must run there too.
 */
final class VirtualThreads {

  /** The first release in which virtual threads are a final feature (JEP 444). */
  static final int FIRST_RELEASE = 21;

  private static final MethodHandle OF_VIRTUAL;
  private static final MethodHandle NAME;
  private static final MethodHandle FACTORY;
  private static final MethodHandle IS_VIRTUAL;

  static {
    MethodHandle ofVirtual = null;
    MethodHandle name = null;
    MethodHandle factory = null;
    MethodHandle isVirtual = null;
    if (Runtime.version().feature() >= FIRST_RELEASE) {
      try {
        MethodHandles.Lookup lookup = MethodHandles.publicLookup();
        Class<?> builder = Class.forName("java.lang.Thread$Builder");
        Class<?> builderOfVirtual = Class.forName("java.lang.Thread$Builder$OfVirtual");
        ofVirtual =
            lookup.findStatic(Thread.class, "ofVirtual", MethodType.methodType(builderOfVirtual));
        name =
            lookup.findVirtual(
                builderOfVirtual,
                "name",
                MethodType.methodType(builderOfVirtual, String.class, long.class));
        factory =
            lookup.findVirtual(builder, "factory", MethodType.methodType(ThreadFactory.class));
        isVirtual =
            lookup.findVirtual(Thread.class, "isVirtual", MethodType.methodType(boolean.class));
      } catch (ReflectiveOperationException e) {
        ofVirtual = null; // a release that has no such API after all: reported as unavailable
      }
    }
    OF_VIRTUAL = ofVirtual;
    NAME = name;
    FACTORY = factory;
    IS_VIRTUAL = isVirtual;
  }

  private VirtualThreads() {}

  static boolean available() {
    return OF_VIRTUAL != null;
  }

  /**
   * Returns a factory of virtual threads named {@code prefix1}, {@code prefix2}, and so on.
   *
   * @throws UnsupportedOperationException on a Java release without virtual threads
   */
  static ThreadFactory factory(String prefix, String whoAsks) {
    if (!available()) {
      throw new UnsupportedOperationException(
          whoAsks
              + " asks for virtual threads, which need Java "
              + FIRST_RELEASE
              + " or later, but this is Java "
              + Runtime.version()
              + ": use platformThreads(), or run on Java "
              + FIRST_RELEASE
              + "+");
    }
    try {
      Object builder = OF_VIRTUAL.invoke();
      builder = NAME.invoke(builder, prefix, 1L);
      return (ThreadFactory) FACTORY.invoke(builder);
    } catch (RuntimeException | Error e) {
      throw e;
    } catch (Throwable e) {
      throw new IllegalStateException("could not create a virtual thread factory", e);
    }
  }

  /** Returns whether {@code thread} is virtual; always false before Java 21. */
  static boolean isVirtual(Thread thread) {
    if (IS_VIRTUAL == null) {
      return false;
    }
    try {
      return (boolean) IS_VIRTUAL.invoke(thread);
    } catch (RuntimeException | Error e) {
      throw e;
    } catch (Throwable e) {
      throw new IllegalStateException(e);
    }
  }
}
