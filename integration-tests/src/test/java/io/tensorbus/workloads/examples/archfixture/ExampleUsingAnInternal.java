package io.tensorbus.workloads.examples.archfixture;

import io.tensorbus.internal.tensor.Shapes;

/** An example that reaches into {@code io.tensorbus.internal}: {@code EXAMPLES_USE_THE_USER_API} must report it. */
public final class ExampleUsingAnInternal {
    private ExampleUsingAnInternal() {
    }

    /** Counts elements with an internal helper instead of {@code Tensor.numel}. */
    public static int elements(int... shape) {
        return Shapes.numel(shape);
    }
}
