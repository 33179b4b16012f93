package io.tensorbus.data;

import io.tensorbus.tensor.Generator;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;

/**
 * Batches of a {@link Dataset}, as PyTorch's {@code torch.utils.data.DataLoader}. Each {@link #iterator()} (each
 * for-each) is one epoch: a {@link RandomSampler} (with {@code shuffle}) reshuffles per epoch reproducibly from
 * the seed, and {@link #setEpoch(int)} selects the epoch of the next iteration, as
 * {@code DistributedSampler.set_epoch}.
 *
 * <p>With {@code prefetch(n)} (default 2, as PyTorch's {@code prefetch_factor}), a virtual thread loads up to
 * {@code n} batches ahead of the consumer; {@code prefetch(0)} loads each batch in the consumer's thread.
 * The loader thread is a virtual thread, not the tensor compute pool: kernels run on that pool, and a
 * loader blocked there would take a share of the cores from them. An exception in the loader thread is
 * rethrown to the consumer as a {@link DataLoaderException} that names the epoch and the batch index. Every
 * wait is bounded by {@code timeout} (default 5 minutes): the consumer's wait for the next batch, and the
 * loader thread's wait for the consumer to take one.
 *
 * <p>The default collate function ({@link Collate#stack}) stacks tensors or pairs of tensors; for a
 * {@link TensorDataset} or {@link FashionMnist} it copies the rows of a batch directly instead.
 *
 * @param <T> the type of one item of the dataset
 */
public final class DataLoader<T> implements Iterable<Batch> {
    private final Dataset<T> dataset;
    private final BatchSampler batchSampler;
    private final Function<? super List<T>, Batch> collate;
    private final int prefetch;
    private final Duration timeout;
    private int nextEpoch;

    private DataLoader(Builder<T> b, long seed) {
        this.dataset = b.dataset;
        Sampler sampler = b.sampler != null ? b.sampler
                : b.shuffle ? new RandomSampler(dataset.size(), seed) : new SequentialSampler(dataset.size());
        this.batchSampler = new BatchSampler(sampler, b.batchSize, b.dropLast);
        this.collate = b.collate;
        this.prefetch = b.prefetch;
        this.timeout = b.timeout;
    }

    /** A builder of a loader over {@code dataset}. */
    public static <T> Builder<T> builder(Dataset<T> dataset) {
        return new Builder<>(dataset);
    }

    /** A loader over {@code dataset} in order, without shuffling, with every other option at its default. */
    public static <T> DataLoader<T> of(Dataset<T> dataset, int batchSize) {
        return builder(dataset).batchSize(batchSize).build();
    }

    /**
     * Starts the next epoch (the one {@link #setEpoch(int)} chose, or the one after the previous iteration).
     * Close the iterator, or let the for-each finish, to stop its loader thread.
     */
    @Override
    public synchronized BatchIterator iterator() {
        int epoch = nextEpoch++;
        batchSampler.setEpoch(epoch);
        return new BatchIterator(epoch, batchSampler.batches(), this::fetch, prefetch, timeout);
    }

    /**
     * Selects the epoch the next {@link #iterator()} yields.
     *
     * @throws IllegalArgumentException when {@code epoch < 0}
     */
    public synchronized void setEpoch(int epoch) {
        if (epoch < 0) {
            throw new IllegalArgumentException("epoch must be >= 0, got " + epoch);
        }
        nextEpoch = epoch;
    }

    /** The epoch the next {@link #iterator()} yields. */
    public synchronized int nextEpoch() {
        return nextEpoch;
    }

    /** The number of batches per epoch ({@code len(loader)}). */
    public int size() {
        return batchSampler.size();
    }

    /** The dataset. */
    public Dataset<T> dataset() {
        return dataset;
    }

    /** The sampler that orders the items. */
    public Sampler sampler() {
        return batchSampler.sampler();
    }

    /** The number of items per batch (the last may hold fewer unless {@link #dropLast()}). */
    public int batchSize() {
        return batchSampler.batchSize();
    }

    /** Whether an incomplete last batch is left out. */
    public boolean dropLast() {
        return batchSampler.dropLast();
    }

    /** How many batches the loader thread loads ahead; 0 when batches load in the consumer's thread. */
    public int prefetch() {
        return prefetch;
    }

    /** The longest any wait of this loader lasts. */
    public Duration timeout() {
        return timeout;
    }

    private Batch fetch(int[] indices) {
        if (collate == null && dataset instanceof Gather g) {
            return g.gather(indices);
        }
        List<T> items = new ArrayList<>(indices.length);
        for (int i : indices) {
            items.add(dataset.get(i));
        }
        Batch b = collate == null ? Collate.stack(items) : collate.apply(items);
        return Objects.requireNonNull(b, "the collate function returned null");
    }

    /**
     * Options of a {@link DataLoader}, with PyTorch's defaults: batch size 1, no shuffle, keep the last batch.
     *
     * @param <T> the type of one item of the dataset
     */
    public static final class Builder<T> {
        private final Dataset<T> dataset;
        private int batchSize = 1;
        private boolean shuffle;
        private Long seed;
        private boolean dropLast;
        private Sampler sampler;
        private Function<? super List<T>, Batch> collate;
        private int prefetch = 2;
        private Duration timeout = Duration.ofMinutes(5);

        private Builder(Dataset<T> dataset) {
            this.dataset = Objects.requireNonNull(dataset, "dataset");
        }

        /**
         * Items per batch.
         *
         * @throws IllegalArgumentException when {@code batchSize < 1}
         */
        public Builder<T> batchSize(int batchSize) {
            if (batchSize < 1) {
                throw new IllegalArgumentException("batchSize must be >= 1, got " + batchSize);
            }
            this.batchSize = batchSize;
            return this;
        }

        /** Whether to visit the items in a new random order each epoch. */
        public Builder<T> shuffle(boolean shuffle) {
            this.shuffle = shuffle;
            return this;
        }

        /** The seed of the shuffle; without one, a seed is drawn from {@link Generator#defaultGenerator()}. */
        public Builder<T> seed(long seed) {
            this.seed = seed;
            return this;
        }

        /** Whether to leave out the last batch when it is incomplete. */
        public Builder<T> dropLast(boolean dropLast) {
            this.dropLast = dropLast;
            return this;
        }

        /** A sampler that chooses the order (for example a {@code DistributedSampler}); excludes shuffle. */
        public Builder<T> sampler(Sampler sampler) {
            this.sampler = Objects.requireNonNull(sampler, "sampler");
            return this;
        }

        /** The function that turns the items of a batch into a {@link Batch}; {@link Collate#stack} by default. */
        public Builder<T> collate(Function<? super List<T>, Batch> collate) {
            this.collate = Objects.requireNonNull(collate, "collate");
            return this;
        }

        /**
         * How many batches a background thread loads ahead; 0 loads in the consumer's thread.
         *
         * @throws IllegalArgumentException when {@code batches} is not in {@code [0, 1024]}
         */
        public Builder<T> prefetch(int batches) {
            if (batches < 0 || batches > 1024) {
                throw new IllegalArgumentException("prefetch must be in [0, 1024] batches, got " + batches);
            }
            this.prefetch = batches;
            return this;
        }

        /**
         * The longest wait: for the next batch, and for the consumer to take a prefetched one.
         *
         * @throws IllegalArgumentException when the timeout is not positive
         */
        public Builder<T> timeout(Duration timeout) {
            if (timeout == null || timeout.isNegative() || timeout.isZero()) {
                throw new IllegalArgumentException("timeout must be positive, got " + timeout);
            }
            this.timeout = timeout;
            return this;
        }

        /**
         * The loader.
         *
         * @throws IllegalArgumentException when both a sampler and shuffle were given
         */
        public DataLoader<T> build() {
            if (sampler != null && shuffle) {
                throw new IllegalArgumentException(
                        "sampler is mutually exclusive with shuffle: shuffle in the sampler");
            }
            return new DataLoader<>(this, seed != null ? seed
                    : Generator.defaultGenerator().nextLong(Long.MIN_VALUE, Long.MAX_VALUE));
        }
    }
}
