package io.tensorbus.tensor;

/**
 * PyTorch's {@code torch.use_deterministic_algorithms}: with it on, every CPU kernel gives the same bits from
 * run to run, whatever the thread count ({@link Threads#set}) and however far the JIT compiler has got.
 *
 * <p>Most kernels are so anyway: work is split among threads only along outputs, never along a sum, and
 * sums run in a fixed order (GEMM depth blocks, per-row reductions, the lanes of a vector in index order).
 * What the switch changes is the transcendental functions (exp, log, tanh, sigmoid, pow): by default they run
 * through the Vector API and the JIT's math intrinsics, whose last bit may differ between interpreted and
 * compiled code; deterministic, they run through {@link StrictMath}, one element at a time, the same on
 * every JVM and CPU. That costs speed on large tensors of those functions (see {@code docs/benchmarks.md}),
 * so the switch is off by default. The tcp backend's collectives are deterministic either way: each
 * algorithm, chosen by size and world size alone, reduces in a fixed order, and every rank ends with the same
 * bits.
 *
 * <p>The switch starts on when the system property {@value #PROPERTY} is {@code true} or the environment
 * variable {@value #ENV} is {@code 1} or {@code true}, so a launched job can turn it on without code.
 */
public final class Determinism {
    /** The system property that turns the switch on at start ({@code -Dtensorbus.deterministic=true}). */
    public static final String PROPERTY = "tensorbus.deterministic";

    /** The environment variable that turns the switch on at start ({@code TENSORBUS_DETERMINISTIC=1}). */
    public static final String ENV = "TENSORBUS_DETERMINISTIC";

    private static volatile boolean enabled = fromStart();

    private Determinism() {
    }

    private static boolean fromStart() {
        String env = System.getenv(ENV);
        return Boolean.getBoolean(PROPERTY) || "1".equals(env) || "true".equalsIgnoreCase(env);
    }

    /** Turns deterministic algorithms on or off for the whole process (every thread), as PyTorch's switch. */
    public static void useDeterministicAlgorithms(boolean on) {
        enabled = on;
    }

    /** {@code torch.are_deterministic_algorithms_enabled}. */
    public static boolean areDeterministicAlgorithmsEnabled() {
        return enabled;
    }
}
