package io.tensorbus.autograd;

/**
 * Whether ops record the backward graph on this thread, as PyTorch's {@code torch.is_grad_enabled()}.
 * Use {@link Autograd#noGrad()} for a scope.
 */
public final class GradMode {
    private static final ThreadLocal<boolean[]> ENABLED = ThreadLocal.withInitial(() -> new boolean[] {true});

    private GradMode() {
    }

    /** True when ops on this thread record gradients. */
    public static boolean isEnabled() {
        return ENABLED.get()[0];
    }

    /** Turns recording on or off for this thread and returns the previous setting. */
    public static boolean setEnabled(boolean enabled) {
        boolean[] cell = ENABLED.get();
        boolean previous = cell[0];
        cell[0] = enabled;
        return previous;
    }

    /** A scope that restores the previous setting when closed; never throws on close. */
    public static final class Scope implements AutoCloseable {
        private final boolean previous;

        Scope(boolean enabled) {
            this.previous = setEnabled(enabled);
        }

        @Override
        public void close() {
            setEnabled(previous);
        }
    }
}
