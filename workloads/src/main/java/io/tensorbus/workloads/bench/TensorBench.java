package io.tensorbus.workloads.bench;

import io.tensorbus.DType;
import io.tensorbus.internal.tensor.Gemm;
import io.tensorbus.nn.Functional;
import io.tensorbus.tensor.Determinism;
import io.tensorbus.tensor.MemoryScope;
import io.tensorbus.tensor.Tensor;
import io.tensorbus.tensor.Threads;
import java.io.PrintStream;
import java.util.function.Consumer;
import java.util.function.IntSupplier;
import picocli.CommandLine.Command;

/**
 * The {@code tensor} suite: the shapes of the PyTorch anchor {@code torch_compute.py}, on 1 and 2 compute
 * threads. {@code sgemm} multiplies two {@code n x n} float32 matrices (n = 256, 1024, 2048) into a
 * preallocated result; {@code conv3x3} runs a ResNet-style 3x3 convolution (64 to 64 channels, 56x56,
 * batch 8, padding 1) forward and backward, {@code 3 * 2 * 8 * 64 * 56 * 56 * 64 * 9} flops. {@code exp} takes
 * {@code e^x} of 4 Mi floats with deterministic algorithms off and on ({@code deterministic=0|1}), the price of
 * {@link Determinism}.
 */
public final class TensorBench {
    /** Matrix sizes of the sgemm measurements. */
    static final int[] SGEMM_SIZES = {256, 1024, 2048};
    /** Compute-thread counts, as {@code torch.set_num_threads}. */
    static final int[] THREADS = {1, 2};
    private static final int BATCH = 8;
    private static final int CHANNELS = 64;
    private static final int SIDE = 56;
    private static final double CONV_FLOPS = 3.0 * 2 * BATCH * CHANNELS * SIDE * SIDE * CHANNELS * 9;
    /** Elements of the exp measurement. */
    static final int EXP_SIZE = 1 << 22;

    private final Timing timing;

    /** A suite that times every measurement with {@code timing}. */
    public TensorBench(Timing timing) {
        this.timing = timing;
    }

    /** A suite with the default timing: 2 s of warm-up, then the median of 5 samples of at least 50 ms. */
    public TensorBench() {
        this(new Timing(2.0, 5, 0.05));
    }

    /**
     * Runs every measurement, handing each to {@code sink} as soon as it is taken, and leaves the compute
     * pool with the thread count it had before.
     */
    public void run(Consumer<Measurement> sink) {
        int before = Threads.get();
        try {
            for (int threads : THREADS) {
                Threads.set(threads);
                for (int n : SGEMM_SIZES) {
                    sink.accept(sgemm(threads, n));
                }
                sink.accept(conv3x3(threads));
                sink.accept(exp(threads, false));
                sink.accept(exp(threads, true));
            }
        } finally {
            Threads.set(before);
        }
    }

    /** {@code e^x} of {@link #EXP_SIZE} floats with deterministic algorithms on or off, in microseconds. */
    Measurement exp(int threads, boolean deterministic) {
        Tensor x = Tensor.randn(EXP_SIZE);
        boolean was = Determinism.areDeterministicAlgorithmsEnabled();
        Determinism.useDeterministicAlgorithms(deterministic);
        try {
            double s = timing.medianSeconds(x::exp);
            return new Measurement("tensor", "exp").with("threads", threads).with("n", EXP_SIZE)
                    .with("deterministic", deterministic ? 1 : 0).with("latency_us", s * 1e6, 0);
        } finally {
            Determinism.useDeterministicAlgorithms(was);
        }
    }

    /** {@code C = A x B} for random {@code n x n} float32 matrices, in GFLOP/s. */
    Measurement sgemm(int threads, int n) {
        Tensor a = Tensor.randn(n, n);
        Tensor b = Tensor.randn(n, n);
        Tensor c = Tensor.empty(DType.FLOAT32, n, n);
        double s = timing.medianSeconds(() -> Gemm.sgemm(false, false, n, n, n, 1f, a.dataSegment(), 0, n,
                b.dataSegment(), 0, n, 0f, c.dataSegment(), 0, n));
        return new Measurement("tensor", "sgemm").with("threads", threads).with("n", n)
                .with("gflops", 2.0 * n * n * n / s / 1e9, 1);
    }

    /** conv2d 3x3 forward, {@code sum()}, backward to input and weight; GFLOP/s and seconds per step. */
    Measurement conv3x3(int threads) {
        Tensor x = Tensor.randn(BATCH, CHANNELS, SIDE, SIDE).requiresGrad(true);
        Tensor w = Tensor.randn(CHANNELS, CHANNELS, 3, 3).requiresGrad(true);
        int[] one = {1, 1};
        // As the anchor's loop: the gradients add into x.grad and w.grad in place, and the step's temporaries go back
        // to the host cache when it ends, as PyTorch frees them. Otherwise every step wrote megabytes of fresh pages
        // until the next collection, and on a virtual machine the page faults, not the convolution, set the
        // one-thread figure (docs/benchmarks.md).
        double s = timing.medianSeconds(() -> {
            try (MemoryScope step = MemoryScope.open()) {
                Functional.conv2d(x, w, null, one, one, one, 1).sum().backward();
            }
        });
        return new Measurement("tensor", "conv3x3").with("threads", threads).with("batch", BATCH)
                .with("gflops", CONV_FLOPS / s / 1e9, 1).with("s", s, 4);
    }

    /** {@code tensorbus bench tensor}. */
    @Command(name = "tensor", description = "matrix products, a ResNet convolution and element-wise kernels on one"
            + " compute thread and on all (the anchor torch_compute.py's shapes)")
    public static final class Suite extends BenchSuite {
        @Override
        protected IntSupplier suite(Consumer<Measurement> sink, PrintStream err) {
            return () -> {
                new TensorBench().run(sink);
                return 0;
            };
        }
    }
}
