package io.bulkhead;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class BulkheadRegistryTest {

  @Test
  void registerFindRemove_andListenersHearOfBoth() {
    BulkheadRegistry registry = BulkheadRegistry.create();
    Bulkhead a = registry.register(Bulkhead.builder("a").limit(1).build());
    List<String> events = new ArrayList<>();
    registry.addListener(new BulkheadRegistry.Listener() {
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
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("'a'");
    assertThat(registry.find("a")).containsSame(first);
  }

  @Test
  void computeIfAbsent_buildsOnce() {
    BulkheadRegistry registry = BulkheadRegistry.create();
    Compartment one = registry.computeIfAbsent("x", n -> Bulkhead.builder(n).limit(3).build());
    Compartment two = registry.computeIfAbsent("x", n -> {
      throw new AssertionError("must not build twice");
    });
    assertThat(two).isSameAs(one);
    assertThatThrownBy(() -> registry.computeIfAbsent("y", n -> Bulkhead.builder("z").limit(1).build()))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("'z'");
  }

  @Test
  void removingACompartment_returnsItsShareToTheBudget() {
    Budget db = Budget.of("postgres", 10);
    BulkheadRegistry registry = BulkheadRegistry.create();
    registry.register(Bulkhead.builder("checkout").limit(6).budget(db).build());
    registry.register(Bulkhead.builder("reports").limit(4).budget(db).build());
    assertThatThrownBy(() -> Bulkhead.builder("exports").limit(1).budget(db).build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("budget 'postgres' is over-subscribed: giving 'exports' a limit of 1 makes"
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
