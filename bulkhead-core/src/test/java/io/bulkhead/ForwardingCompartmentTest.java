package io.bulkhead;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import org.junit.jupiter.api.Test;

class ForwardingCompartmentTest {

  @Test
  void forwardsEveryMethodOfCompartment() throws NoSuchMethodException {
    for (Method m : Compartment.class.getMethods()) {
      if (Modifier.isStatic(m.getModifiers())) {
        continue;
      }
      assertThat(
              ForwardingCompartment.class
                  .getDeclaredMethod(m.getName(), m.getParameterTypes())
                  .getDeclaringClass())
          .as("%s is forwarded", m.getName())
          .isEqualTo(ForwardingCompartment.class);
    }
  }

  @Test
  void aDecoratorOverridesOnlyWhatItChanges() {
    Bulkhead gate = Bulkhead.builder("db").limit(2).build();
    Compartment renamed =
        new ForwardingCompartment() {
          @Override
          protected Compartment delegate() {
            return gate;
          }

          @Override
          public String name() {
            return "orders.db";
          }
        };

    renamed.setLimit(3);

    assertThat(renamed.name()).isEqualTo("orders.db");
    assertThat(gate.config().limit()).isEqualTo(3);
    assertThat(renamed.config()).isEqualTo(gate.config());
    assertThat(renamed.stats().inFlight()).isZero();
    assertThat(renamed.budget()).isEmpty();
    assertThat(renamed).hasToString(gate.toString());
  }
}
