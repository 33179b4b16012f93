package io.tensorbus.distributed.algorithms;

import io.tensorbus.tensor.Tensor;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The hyperparameters and memory of the PowerSGD hooks ({@code powerSGD_hook.PowerSGDState}): the rank of the
 * approximation, when compression starts, which tensors are worth compressing, error feedback and warm start, and
 * per bucket the error and the last P and Q. One state serves one DistributedDataParallel; create it with
 * {@link #builder()} and pass it to {@link CommHooks#powerSGD} or {@link CommHooks#batchedPowerSGD}.
 *
 * <p>PyTorch seeds its random Q from NumPy and its own generator; here the same {@code randomSeed} gives the same Q on
 * every rank (which is what the algorithm needs), but not PyTorch's numbers. PyTorch's
 * {@code batch_tensors_with_same_shape} only changes how the same products are computed and is not offered.
 */
public final class PowerSGDState {
    final int matrixApproximationRank;
    final long startPowerSGDIter;
    final double minCompressionRate;
    final boolean useErrorFeedback;
    final boolean warmStart;
    final double orthogonalizationEpsilon;
    final Random rng;
    final Map<Integer, Tensor> errors = new ConcurrentHashMap<>();
    final Map<Integer, Tensor> ps = new ConcurrentHashMap<>();
    final Map<Integer, Tensor> qs = new ConcurrentHashMap<>();
    private volatile long iter;
    private long numelBeforeCompression;
    private long numelAfterCompression;

    private PowerSGDState(Builder b) {
        this.matrixApproximationRank = b.matrixApproximationRank;
        this.startPowerSGDIter = b.startPowerSGDIter;
        this.minCompressionRate = b.minCompressionRate;
        this.useErrorFeedback = b.useErrorFeedback;
        this.warmStart = b.warmStart;
        this.orthogonalizationEpsilon = b.orthogonalizationEpsilon;
        this.rng = new Random(b.randomSeed);
    }

    /** A builder with PyTorch's defaults: rank 1, start at iteration 1000, rate 2, error feedback and warm start on. */
    public static Builder builder() {
        return new Builder();
    }

    /** The iterations completed so far (PyTorch's {@code state.iter}): compression starts when it reaches the start. */
    public long iteration() {
        return iter;
    }

    /**
     * {@code compression_stats()}: the elements the hooks were given and the elements they sent in their place, summed
     * over every compressed iteration, and their ratio (0 before any compression).
     */
    public synchronized CompressionStats compressionStats() {
        double rate = numelAfterCompression > 0 ? (double) numelBeforeCompression / numelAfterCompression : 0;
        return new CompressionStats(rate, numelBeforeCompression, numelAfterCompression);
    }

    synchronized void count(long before, long after) {
        numelBeforeCompression += before;
        numelAfterCompression += after;
    }

    /** {@code maybe_increase_iter}: an iteration ends with its last bucket. */
    void maybeIncreaseIter(GradBucket bucket) {
        if (bucket.isLast()) {
            iter++;
        }
    }

    boolean compressing() {
        return iter >= startPowerSGDIter;
    }

    /**
     * What the PowerSGD hooks saved: {@code rate} elements before compression per element after it.
     *
     * @param rate the effective compression rate, {@code numelBefore / numelAfter}
     * @param numelBefore the gradient elements handed to the hooks while compressing
     * @param numelAfter the elements the hooks all-reduced in their place
     */
    public record CompressionStats(double rate, long numelBefore, long numelAfter) {
    }

    /** Builds a {@link PowerSGDState}; every setter checks its value. */
    public static final class Builder {
        private int matrixApproximationRank = 1;
        private long startPowerSGDIter = 1000;
        private double minCompressionRate = 2;
        private boolean useErrorFeedback = true;
        private boolean warmStart = true;
        private double orthogonalizationEpsilon;
        private long randomSeed;

        private Builder() {
        }

        /**
         * The rank of each gradient matrix's approximation (1 by default; 1 to 4 is typical).
         *
         * @throws IllegalArgumentException when below 1
         */
        public Builder matrixApproximationRank(int rank) {
            if (rank < 1) {
                throw new IllegalArgumentException("matrixApproximationRank must be at least 1, got " + rank);
            }
            this.matrixApproximationRank = rank;
            return this;
        }

        /**
         * The iteration from which the hooks compress; before it they all-reduce (1000 by default). With error
         * feedback or warm start it must be above 1, as in PyTorch.
         *
         * @throws IllegalArgumentException when negative
         */
        public Builder startPowerSGDIter(long iteration) {
            if (iteration < 0) {
                throw new IllegalArgumentException("startPowerSGDIter must be at least 0, got " + iteration);
            }
            this.startPowerSGDIter = iteration;
            return this;
        }

        /**
         * The least ratio of a matrix's elements to its P and Q's for it to be compressed (2 by default); the other
         * tensors, vectors among them, are all-reduced as they are.
         *
         * @throws IllegalArgumentException when not positive and finite
         */
        public Builder minCompressionRate(double rate) {
            if (!(rate > 0) || Double.isInfinite(rate)) {
                throw new IllegalArgumentException("minCompressionRate must be positive and finite, got " + rate);
            }
            this.minCompressionRate = rate;
            return this;
        }

        /** Adds each bucket's compression error to its next gradients (on by default). */
        public Builder useErrorFeedback(boolean on) {
            this.useErrorFeedback = on;
            return this;
        }

        /** Starts each iteration's Q from the last one's instead of a random one (on by default). */
        public Builder warmStart(boolean on) {
            this.warmStart = on;
            return this;
        }

        /**
         * Added to each column's norm in the orthogonalisation, so an all-zero column does not divide by zero (0 by
         * default; 1e-8 is PyTorch's suggestion).
         *
         * @throws IllegalArgumentException when negative or not finite
         */
        public Builder orthogonalizationEpsilon(double epsilon) {
            if (!(epsilon >= 0) || Double.isInfinite(epsilon)) {
                throw new IllegalArgumentException("orthogonalizationEpsilon must be at least 0, got " + epsilon);
            }
            this.orthogonalizationEpsilon = epsilon;
            return this;
        }

        /** The seed of the random Qs, the same on every rank (0 by default). */
        public Builder randomSeed(long seed) {
            this.randomSeed = seed;
            return this;
        }

        /**
         * The state.
         *
         * @throws IllegalArgumentException when error feedback or warm start is on and compression would start before
         *     iteration 2 (PyTorch's rule: DDP may rebuild its buckets after the first iteration)
         */
        public PowerSGDState build() {
            if ((useErrorFeedback || warmStart) && startPowerSGDIter <= 1) {
                throw new IllegalArgumentException("startPowerSGDIter must be > 1 when useErrorFeedback or warmStart"
                        + " is on, got " + startPowerSGDIter);
            }
            return new PowerSGDState(this);
        }
    }
}
