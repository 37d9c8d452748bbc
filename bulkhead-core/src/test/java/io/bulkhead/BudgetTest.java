package io.bulkhead;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** A budget's arithmetic at the edges of {@code int}: a sum never saturates into "it fits". */
class BudgetTest {

  private static final int MAX = Integer.MAX_VALUE;

  @Test
  void twoCompartmentsOfIntMax_overSubscribeABudgetOfIntMax() {
    Budget budget = Budget.of("b", MAX);
    Bulkhead.builder("x").limit(MAX).budget(budget).build();
    assertThatThrownBy(() -> Bulkhead.builder("y").limit(MAX).budget(budget).build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "budget 'b' is over-subscribed: giving 'y' a limit of "
                + MAX
                + " makes x "
                + MAX
                + " + y "
                + MAX
                + " = 4294967294, more than its capacity of "
                + MAX);
    assertThat(budget.allocated()).isEqualTo(MAX);
    assertThat(budget.shares()).containsOnlyKeys("x");
  }

  @Test
  void aSetLimitThatWouldOverflow_isRefused_andChangesNothing() {
    Budget budget = Budget.of("b", MAX);
    Bulkhead x = Bulkhead.builder("x").limit(MAX - 1).budget(budget).build();
    Bulkhead y = Bulkhead.builder("y").limit(1).budget(budget).build();
    assertThatThrownBy(() -> y.setLimit(MAX))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("= " + (2L * MAX - 1));
    assertThat(y.config().limit()).isEqualTo(1);
    assertThat(budget.allocated()).isEqualTo(MAX);
    assertThat(x.config().limit()).isEqualTo(MAX - 1);
  }

  @Test
  void aBudgetFilledExactlyToIntMax_holds() {
    Budget budget = Budget.of("b", MAX);
    Bulkhead.builder("x").limit(MAX - 5).budget(budget).build();
    Bulkhead.builder("y").limit(5).budget(budget).build();
    assertThat(budget.allocated()).isEqualTo(MAX);
  }

  @Test
  void capacityAndName_areChecked() {
    assertThatThrownBy(() -> Budget.of("b", 0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("capacity of budget 'b' must be at least 1 but was 0");
    assertThatThrownBy(() -> Budget.of(" ", 1)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> Budget.of(null, 1))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("name");
  }
}
