package io.bulkhead;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

class BulkheadRegistryTest {

  @Test
  void registerFindRemove_andListenersHearOfBoth() {
    BulkheadRegistry registry = BulkheadRegistry.create();
    Bulkhead a = registry.register(Bulkhead.builder("a").limit(1).build());
    List<String> events = new ArrayList<>();
    registry.addListener(
        new BulkheadRegistry.Listener() {
          @Override
          public void onAdded(Compartment b) {
            events.add("+" + b.name());
          }

          @Override
          public void onRemoved(Compartment b) {
            events.add("-" + b.name());
          }
        });
    registry.register(Bulkhead.builder("b").limit(1).build());
    assertThat(registry.find("a")).containsSame(a);
    assertThat(registry.all()).extracting(Compartment::name).containsExactly("a", "b");
    assertThat(registry.remove("a")).containsSame(a);
    assertThat(registry.remove("a")).isEmpty();
    assertThat(events).containsExactly("+a", "+b", "-a");
  }

  @Test
  void duplicateName_isRejected_andTheFirstStays() {
    BulkheadRegistry registry = BulkheadRegistry.create();
    Bulkhead first = registry.register(Bulkhead.builder("a").limit(1).build());
    assertThatThrownBy(() -> registry.register(Bulkhead.builder("a").limit(2).build()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("'a'");
    assertThat(registry.find("a")).containsSame(first);
  }

  @Test
  void computeIfAbsent_buildsOnce() {
    BulkheadRegistry registry = BulkheadRegistry.create();
    Compartment one = registry.computeIfAbsent("x", n -> Bulkhead.builder(n).limit(3).build());
    Compartment two =
        registry.computeIfAbsent(
            "x",
            n -> {
              throw new AssertionError("must not build twice");
            });
    assertThat(two).isSameAs(one);
    assertThatThrownBy(
            () -> registry.computeIfAbsent("y", n -> Bulkhead.builder("z").limit(1).build()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("'z'");
  }

  @Test
  void computeIfAbsent_aSecondCallerForTheSameName_waitsForTheFirstFactory_andNeverRunsItsOwn()
      throws Exception {
    BulkheadRegistry registry = BulkheadRegistry.create();
    Budget db = Budget.of("postgres", 10);
    CountDownLatch building = new CountDownLatch(1);
    CountDownLatch finish = new CountDownLatch(1);
    AtomicInteger builds = new AtomicInteger();
    Function<String, Compartment> slowFactory =
        n -> {
          builds.incrementAndGet();
          building.countDown();
          awaitUninterruptibly(finish);
          return Bulkhead.builder(n).limit(3).budget(db).build();
        };
    CompletableFuture<Compartment> first = new CompletableFuture<>();
    Thread t1 = start(() -> first.complete(registry.computeIfAbsent("x", slowFactory)));
    assertThat(building.await(10, SECONDS)).isTrue();

    // The factory holds no lock: the registry serves other names and other callers meanwhile.
    Bulkhead other = registry.register(Bulkhead.builder("y").limit(1).build());
    assertThat(registry.find("y")).containsSame(other);
    assertThat(registry.find("x")).isEmpty();

    CompletableFuture<Compartment> second = new CompletableFuture<>();
    Thread t2 =
        start(
            () ->
                second.complete(
                    registry.computeIfAbsent(
                        "x",
                        n -> {
                          builds.incrementAndGet();
                          return Bulkhead.builder(n).limit(3).budget(db).build();
                        })));
    await().atMost(Duration.ofSeconds(10)).until(() -> t2.getState() == Thread.State.WAITING);
    assertThat(second).as("the second caller waits for the first factory").isNotDone();

    finish.countDown();
    t1.join(10_000);
    t2.join(10_000);
    assertThat(first.get(10, SECONDS))
        .isSameAs(second.get(10, SECONDS))
        .isSameAs(registry.find("x").orElseThrow());
    assertThat(builds).as("the second factory never ran").hasValue(1);
    assertThat(db.shares()).containsExactly(Map.entry("x", 3));
  }

  @Test
  void computeIfAbsent_whenTheFactoryThrows_aWaitingCallerBuildsItsOwn() throws Exception {
    BulkheadRegistry registry = BulkheadRegistry.create();
    CountDownLatch building = new CountDownLatch(1);
    CountDownLatch fail = new CountDownLatch(1);
    CompletableFuture<Throwable> firstFailure = new CompletableFuture<>();
    Thread t1 =
        start(
            () -> {
              try {
                registry.computeIfAbsent(
                    "x",
                    n -> {
                      building.countDown();
                      awaitUninterruptibly(fail);
                      throw new IllegalStateException("config server down");
                    });
              } catch (IllegalStateException e) {
                firstFailure.complete(e);
              }
            });
    assertThat(building.await(10, SECONDS)).isTrue();
    CompletableFuture<Compartment> second = new CompletableFuture<>();
    Thread t2 =
        start(
            () ->
                second.complete(
                    registry.computeIfAbsent("x", n -> Bulkhead.builder(n).limit(2).build())));
    await().atMost(Duration.ofSeconds(10)).until(() -> t2.getState() == Thread.State.WAITING);

    fail.countDown();
    t1.join(10_000);
    t2.join(10_000);
    assertThat(firstFailure.get(10, SECONDS)).hasMessage("config server down");
    assertThat(second.get(10, SECONDS).config().limit()).isEqualTo(2);
    assertThat(registry.find("x")).containsSame(second.get());
  }

  @Test
  void computeIfAbsent_losingToRegister_givesWhatItBuiltBackToTheBudget_andReturnsTheRegisteredOne()
      throws Exception {
    BulkheadRegistry registry = BulkheadRegistry.create();
    Budget db = Budget.of("postgres", 10);
    CountDownLatch built = new CountDownLatch(1);
    CountDownLatch finish = new CountDownLatch(1);
    List<String> added = new CopyOnWriteArrayList<>();
    registry.addListener(
        new BulkheadRegistry.Listener() {
          @Override
          public void onAdded(Compartment b) {
            added.add(b.name() + " " + b.config().limit());
          }
        });
    CompletableFuture<Compartment> computed = new CompletableFuture<>();
    Thread t1 =
        start(
            () ->
                computed.complete(
                    registry.computeIfAbsent(
                        "x",
                        n -> {
                          Bulkhead b = Bulkhead.builder(n).limit(4).budget(db).build();
                          built.countDown();
                          awaitUninterruptibly(finish);
                          return b;
                        })));
    assertThat(built.await(10, SECONDS)).isTrue();
    assertThat(db.allocated()).isEqualTo(4);
    Bulkhead registered = registry.register(Bulkhead.builder("x").limit(1).build());

    finish.countDown();
    t1.join(10_000);
    assertThat(computed.get(10, SECONDS)).isSameAs(registered);
    assertThat(registry.find("x")).containsSame(registered);
    assertThat(db.allocated()).as("the discarded compartment's share is back").isZero();
    assertThat(added).as("listeners hear of the registered one only").containsExactly("x 1");
  }

  @Test
  void computeIfAbsent_aFactoryThatBuildsTheWrongName_givesItsShareBack() {
    BulkheadRegistry registry = BulkheadRegistry.create();
    Budget db = Budget.of("postgres", 10);
    assertThatThrownBy(
            () ->
                registry.computeIfAbsent(
                    "y", n -> Bulkhead.builder("z").limit(3).budget(db).build()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("factory for 'y' built a bulkhead named 'z'");
    assertThat(db.allocated()).isZero();
    assertThat(registry.all()).isEmpty();
    assertThat(
            registry
                .computeIfAbsent("y", n -> Bulkhead.builder(n).limit(3).budget(db).build())
                .name())
        .isEqualTo("y");
  }

  @Test
  void computeIfAbsent_aFactoryAskingForItsOwnName_isRefusedInsteadOfWaitingForItself() {
    BulkheadRegistry registry = BulkheadRegistry.create();
    assertThatThrownBy(
            () ->
                registry.computeIfAbsent(
                    "x",
                    n -> registry.computeIfAbsent("x", m -> Bulkhead.builder(m).limit(1).build())))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("'x'");
    assertThat(registry.all()).isEmpty();
    assertThat(registry.computeIfAbsent("x", n -> Bulkhead.builder(n).limit(1).build()).name())
        .isEqualTo("x");
  }

  /** A user's own decorator: forwards everything to a built compartment, counts the calls. */
  private static final class Counted implements Bulkhead {
    final Bulkhead inner;
    final AtomicInteger calls = new AtomicInteger();

    Counted(Bulkhead inner) {
      this.inner = inner;
    }

    @Override
    public <T> T call(Callable<T> task) throws Exception {
      calls.incrementAndGet();
      return inner.call(task);
    }

    @Override
    public <T> CompletableFuture<T> submit(Supplier<? extends CompletionStage<T>> task) {
      calls.incrementAndGet();
      return inner.submit(task);
    }

    @Override
    public Optional<Permit> tryAcquire() {
      return inner.tryAcquire();
    }

    @Override
    public Permit acquire() {
      return inner.acquire();
    }

    @Override
    public String name() {
      return inner.name();
    }

    @Override
    public BulkheadConfig config() {
      return inner.config();
    }

    @Override
    public void setLimit(int limit) {
      inner.setLimit(limit);
    }

    @Override
    public BulkheadStats stats() {
      return inner.stats();
    }

    @Override
    public void addListener(BulkheadListener listener) {
      inner.addListener(listener);
    }

    @Override
    public boolean removeListener(BulkheadListener listener) {
      return inner.removeListener(listener);
    }

    @Override
    public Optional<Budget> budget() {
      return inner.budget();
    }

    @Override
    public void leaveBudget() {
      inner.leaveBudget();
    }
  }

  @Test
  void removingAUsersOwnDecorator_givesItsShareBack() throws Exception {
    Budget db = Budget.of("postgres", 10);
    BulkheadRegistry registry = BulkheadRegistry.create();
    Counted llm =
        registry.register(new Counted(Bulkhead.builder("llm").limit(7).budget(db).build()));
    assertThat(llm.call(() -> "answer")).isEqualTo("answer");
    assertThat(llm.calls).hasValue(1);
    assertThat(registry.bulkhead("llm")).containsSame(llm);
    assertThat(db.allocated()).isEqualTo(7);

    assertThat(registry.remove("llm")).containsSame(llm);
    assertThat(db.allocated()).as("its share is back").isZero();
    assertThat(llm.budget()).isEmpty();
    registry.register(
        Bulkhead.builder("llm").limit(10).budget(db).build()); // the room is free again
    assertThat(db.shares()).containsExactly(Map.entry("llm", 10));
  }

  private static Thread start(Runnable body) {
    Thread t = new Thread(body, "registry-test");
    t.setDaemon(true);
    t.start();
    return t;
  }

  private static void awaitUninterruptibly(CountDownLatch latch) {
    try {
      if (!latch.await(30, SECONDS)) {
        throw new AssertionError("latch not released within 30 s");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }

  @Test
  void removingACompartment_returnsItsShareToTheBudget() {
    Budget db = Budget.of("postgres", 10);
    BulkheadRegistry registry = BulkheadRegistry.create();
    registry.register(Bulkhead.builder("checkout").limit(6).budget(db).build());
    registry.register(Bulkhead.builder("reports").limit(4).budget(db).build());
    assertThatThrownBy(() -> Bulkhead.builder("exports").limit(1).budget(db).build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "budget 'postgres' is over-subscribed: giving 'exports' a limit of 1 makes"
                + " checkout 6 + reports 4 + exports 1 = 11, more than its capacity of 10");
    Compartment reports = registry.find("reports").orElseThrow();
    registry.remove("reports");
    assertThat(db.allocated()).isEqualTo(6);
    reports.setLimit(5); // a discarded compartment cannot take its share back
    assertThat(db.allocated()).isEqualTo(6);
    registry.register(Bulkhead.builder("exports").limit(4).budget(db).build());
    assertThat(db.shares()).containsEntry("exports", 4).containsEntry("checkout", 6);
  }

  @Test
  void setLimit_isCheckedAgainstTheBudget_andChangesNothingWhenItFails() {
    Budget db = Budget.of("postgres", 10);
    Bulkhead checkout = Bulkhead.builder("checkout").limit(6).budget(db).build();
    Bulkhead.builder("reports").limit(4).budget(db).build();
    assertThatThrownBy(() -> checkout.setLimit(7))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("checkout 7 + reports 4 = 11");
    assertThat(checkout.config().limit()).isEqualTo(6);
    assertThat(db.allocated()).isEqualTo(10);
    checkout.setLimit(5);
    assertThat(db.allocated()).isEqualTo(9);
  }
}
