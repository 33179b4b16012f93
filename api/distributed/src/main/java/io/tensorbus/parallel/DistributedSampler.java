package io.tensorbus.parallel;

import io.tensorbus.data.Dataset;
import io.tensorbus.data.Sampler;
import io.tensorbus.distributed.ProcessGroup;
import io.tensorbus.tensor.Generator;
import io.tensorbus.tensor.Tensor;
import java.util.Arrays;
import java.util.Objects;
import java.util.PrimitiveIterator;

/**
 * The share of a dataset that one rank visits, as PyTorch's {@code torch.utils.data.distributed.DistributedSampler}:
 * each of {@code numReplicas} ranks sees {@link #size()} indices per epoch, and together the ranks cover the
 * whole dataset, so that data-parallel training sees every item once per epoch.
 *
 * <p>One epoch is computed as PyTorch does:
 * <ol>
 *   <li>the indices {@code 0..n-1}, or with {@code shuffle} a permutation of them drawn from
 *       {@code new Generator(seed + epoch)} ({@link Tensor#randperm}); every rank draws the same permutation
 *       because only the seed and the epoch determine it (it is not bit-identical to PyTorch's permutation);</li>
 *   <li>without {@code dropLast}, the list is padded to the next multiple of {@code numReplicas} by repeating
 *       indices from its start (cyclically, when the padding is longer than the list), so a few items are
 *       seen twice; with {@code dropLast}, the tail is cut so that each rank gets {@code floor(n / numReplicas)};</li>
 *   <li>rank {@code r} takes every {@code numReplicas}-th index starting at {@code r}
 *       ({@code indices[rank : total : numReplicas]}).</li>
 * </ol>
 * For example, with 10 items, 3 replicas and no shuffle, ranks 0, 1, 2 get {@code [0, 3, 6, 9]},
 * {@code [1, 4, 7, 0]} and {@code [2, 5, 8, 1]}.
 *
 * <p>Call {@link #setEpoch(int)} before each epoch (a {@link io.tensorbus.data.DataLoader} does it for every
 * iteration, and its {@code setEpoch} chooses which), otherwise every epoch repeats the same order.
 * Instances are immutable except for the epoch, which is safe to set from another thread.
 */
public final class DistributedSampler implements Sampler {
    private final int datasetSize;
    private final int numReplicas;
    private final int rank;
    private final boolean shuffle;
    private final long seed;
    private final boolean dropLast;
    private final int numSamples;
    private volatile int epoch;

    /**
     * A sampler with PyTorch's defaults: shuffled, seed 0, keeping every item (padding with repeats).
     *
     * @param datasetSize the number of items of the dataset, at least 0
     * @param numReplicas the number of ranks that share the dataset, at least 1
     * @param rank this rank, in {@code [0, numReplicas)}
     * @throws IllegalArgumentException when an argument is out of range; the message says which and what is allowed
     */
    public DistributedSampler(int datasetSize, int numReplicas, int rank) {
        this(datasetSize, numReplicas, rank, true, 0, false);
    }

    /**
     * A sampler with every option given.
     *
     * @param datasetSize the number of items of the dataset, at least 0
     * @param numReplicas the number of ranks that share the dataset, at least 1
     * @param rank this rank, in {@code [0, numReplicas)}
     * @param shuffle whether each epoch visits a new permutation (seeded by {@code seed + epoch})
     * @param seed the seed of the permutations; must be the same on every rank
     * @param dropLast whether to cut the tail so that no index repeats, instead of padding with repeats
     * @throws IllegalArgumentException when an argument is out of range; the message says which and what is allowed
     */
    public DistributedSampler(int datasetSize, int numReplicas, int rank, boolean shuffle, long seed,
                              boolean dropLast) {
        checkArguments(datasetSize, numReplicas, rank);
        this.datasetSize = datasetSize;
        this.numReplicas = numReplicas;
        this.rank = rank;
        this.shuffle = shuffle;
        this.seed = seed;
        this.dropLast = dropLast;
        // PyTorch: ceil((n - r) / r) with drop_last when n % r != 0, which is floor(n / r); ceil(n / r) otherwise.
        this.numSamples = dropLast ? datasetSize / numReplicas : ceilDiv(datasetSize, numReplicas);
    }

    /**
     * A sampler for this process's share of {@code dataset} in {@code group} (rank and size from the group),
     * with PyTorch's defaults: shuffled, seed 0, no dropLast.
     *
     * @throws NullPointerException when an argument is null
     * @throws IllegalArgumentException when this process is not a member of {@code group}
     */
    public static DistributedSampler of(Dataset<?> dataset, ProcessGroup group) {
        return builder(dataset).group(group).build();
    }

    /**
     * A builder for a sampler over {@code datasetSize} items; set {@code numReplicas} and {@code rank} (or
     * {@code group}) before {@link Builder#build()}.
     *
     * @throws IllegalArgumentException when {@code datasetSize < 0}
     */
    public static Builder builder(int datasetSize) {
        return new Builder(datasetSize);
    }

    /**
     * A builder for a sampler over the items of {@code dataset}.
     *
     * @throws NullPointerException when {@code dataset} is null
     */
    public static Builder builder(Dataset<?> dataset) {
        return new Builder(Objects.requireNonNull(dataset, "dataset must not be null").size());
    }

    private static void checkArguments(int datasetSize, int numReplicas, int rank) {
        if (datasetSize < 0) {
            throw new IllegalArgumentException("datasetSize=" + datasetSize + " must be >= 0");
        }
        if (numReplicas < 1) {
            throw new IllegalArgumentException("numReplicas=" + numReplicas + " must be >= 1");
        }
        if (rank < 0 || rank >= numReplicas) {
            throw new IllegalArgumentException("rank=" + rank + " is invalid: rank must be in [0, " + numReplicas
                    + ") for numReplicas=" + numReplicas);
        }
        // The padded list has ceil(n / r) * r entries; positions in it are ints.
        long total = (long) ceilDiv(datasetSize, numReplicas) * numReplicas;
        if (total > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("datasetSize=" + datasetSize + " padded to a multiple of numReplicas="
                    + numReplicas + " is " + total + " indices; at most " + Integer.MAX_VALUE + " are allowed");
        }
    }

    private static int ceilDiv(int a, int b) {
        return (int) (((long) a + b - 1) / b);
    }

    /** The number of indices this rank visits per epoch ({@code num_samples}). */
    @Override
    public int size() {
        return numSamples;
    }

    /** The number of indices all ranks together visit per epoch ({@code total_size}), padding included. */
    public int totalSize() {
        return numSamples * numReplicas;
    }

    /** The number of items of the dataset. */
    public int datasetSize() {
        return datasetSize;
    }

    /** The number of ranks that share the dataset. */
    public int numReplicas() {
        return numReplicas;
    }

    /** This sampler's rank, in {@code [0, numReplicas)}. */
    public int rank() {
        return rank;
    }

    /** Whether each epoch visits a new permutation. */
    public boolean shuffle() {
        return shuffle;
    }

    /** The seed of the permutations. */
    public long seed() {
        return seed;
    }

    /** Whether the tail is cut instead of padded. */
    public boolean dropLast() {
        return dropLast;
    }

    /** The epoch the next {@link #iterator()} yields the order of. */
    public int epoch() {
        return epoch;
    }

    /**
     * Selects the epoch ({@code set_epoch}); with shuffle, each epoch has its own order, the same on every rank.
     *
     * @throws IllegalArgumentException when {@code epoch < 0}
     */
    @Override
    public void setEpoch(int epoch) {
        Sampler.super.setEpoch(epoch);
        this.epoch = epoch;
    }

    @Override
    public PrimitiveIterator.OfInt iterator() {
        return Arrays.stream(toArray()).iterator();
    }

    /** This rank's indices of the current epoch, a fresh array of {@link #size()} entries. */
    @Override
    public int[] toArray() {
        int[] all = epochOrder();
        int[] mine = new int[numSamples];
        for (int i = 0; i < numSamples; i++) {
            // Entry j of the padded list is all[j % n]: PyTorch appends indices[:padding], or
            // (indices * k)[:padding] when the padding is longer than the list. A cut list (dropLast) is a
            // prefix, where j < n and the modulo changes nothing.
            mine[i] = all[(rank + i * numReplicas) % datasetSize];
        }
        return mine;
    }

    /** The whole dataset's order for the current epoch, before padding or cutting. */
    private int[] epochOrder() {
        if (!shuffle) {
            int[] order = new int[datasetSize];
            Arrays.setAll(order, i -> i);
            return order;
        }
        // Seeded by seed + epoch, as PyTorch's g.manual_seed(self.seed + self.epoch): same on every rank.
        return Tensor.randperm(new Generator(seed + epoch), datasetSize).toIntArray();
    }

    @Override
    public String toString() {
        return "DistributedSampler(datasetSize=" + datasetSize + ", numReplicas=" + numReplicas + ", rank=" + rank
                + ", shuffle=" + shuffle + ", seed=" + seed + ", dropLast=" + dropLast + ")";
    }

    /**
     * Options of a {@link DistributedSampler}, with PyTorch's defaults: shuffle true, seed 0, dropLast false.
     * {@code numReplicas} and {@code rank} have no default (tensorbus has no implicit global group): set them,
     * or {@link #group(ProcessGroup)}.
     */
    public static final class Builder {
        private final int datasetSize;
        private Integer numReplicas;
        private Integer rank;
        private boolean shuffle = true;
        private long seed;
        private boolean dropLast;

        private Builder(int datasetSize) {
            if (datasetSize < 0) {
                throw new IllegalArgumentException("datasetSize=" + datasetSize + " must be >= 0");
            }
            this.datasetSize = datasetSize;
        }

        /** The number of ranks that share the dataset (checked in {@link #build()}: at least 1). */
        public Builder numReplicas(int numReplicas) {
            this.numReplicas = numReplicas;
            return this;
        }

        /** This rank (checked in {@link #build()}: in {@code [0, numReplicas)}). */
        public Builder rank(int rank) {
            this.rank = rank;
            return this;
        }

        /**
         * Takes {@code numReplicas} from {@code group.size()} and {@code rank} from {@code group.rank()}.
         *
         * @throws NullPointerException when {@code group} is null
         * @throws IllegalArgumentException when this process is not a member of {@code group}
         */
        public Builder group(ProcessGroup group) {
            Objects.requireNonNull(group, "group must not be null");
            if (!group.isMember()) {
                throw new IllegalArgumentException("this process is not a member of group '" + group.name()
                        + "' (ranks " + Arrays.toString(group.ranks()) + "): it has no rank to sample for");
            }
            this.numReplicas = group.size();
            this.rank = group.rank();
            return this;
        }

        /** Whether each epoch visits a new permutation (default true). */
        public Builder shuffle(boolean shuffle) {
            this.shuffle = shuffle;
            return this;
        }

        /** The seed of the permutations (default 0); must be the same on every rank. */
        public Builder seed(long seed) {
            this.seed = seed;
            return this;
        }

        /** Whether to cut the tail instead of padding with repeated indices (default false). */
        public Builder dropLast(boolean dropLast) {
            this.dropLast = dropLast;
            return this;
        }

        /**
         * The sampler.
         *
         * @throws IllegalArgumentException when numReplicas or rank was not set, or is out of range
         */
        public DistributedSampler build() {
            if (numReplicas == null || rank == null) {
                throw new IllegalArgumentException("DistributedSampler needs numReplicas and rank (got numReplicas="
                        + numReplicas + ", rank=" + rank + "): set both, or group(processGroup)");
            }
            return new DistributedSampler(datasetSize, numReplicas, rank, shuffle, seed, dropLast);
        }
    }
}
