package io.tensorbus.workloads.examples;

import io.tensorbus.data.Dataset;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.Random;

/**
 * The tutorial's {@code DataPartitioner}: shuffles the indices of a dataset with a seeded generator and
 * cuts them into consecutive partitions of the given fractions, so that every process, with the same seed,
 * computes the same cut and {@link #use(int) uses} its own part. A partition is a {@link Dataset} view
 * ({@link Partition}, the tutorial's {@code Partition}) that reads the items of the original dataset.
 *
 * @param <T> the type of one item
 */
public final class DataPartitioner<T> {
    /** The tutorial's default fractions. */
    public static final double[] DEFAULT_SIZES = {0.7, 0.2, 0.1};
    /** The tutorial's default seed. */
    public static final long DEFAULT_SEED = 1234;

    private final Dataset<T> data;
    private final List<int[]> partitions = new ArrayList<>();

    /** Partitions {@code data} into the tutorial's default fractions (0.7, 0.2, 0.1) with seed 1234. */
    public DataPartitioner(Dataset<T> data) {
        this(data, DEFAULT_SIZES, DEFAULT_SEED);
    }

    /**
     * Partitions {@code data}: partition {@code i} gets {@code (int) (sizes[i] * data.size())} indices, taken
     * in turn from a shuffle of all indices.
     *
     * @param sizes the fraction of the dataset each partition gets; each in [0, 1], together at most 1
     * @param seed the shuffle's seed, the same on every process
     * @throws IllegalArgumentException for no sizes, a fraction outside [0, 1], or fractions summing above 1
     */
    public DataPartitioner(Dataset<T> data, double[] sizes, long seed) {
        this.data = Objects.requireNonNull(data, "data");
        checkSizes(sizes);
        int dataLen = data.size();
        List<Integer> indexes = new ArrayList<>(dataLen);
        for (int i = 0; i < dataLen; i++) {
            indexes.add(i);
        }
        Collections.shuffle(indexes, new Random(seed));
        int from = 0;
        for (double frac : sizes) {
            int partLen = Math.min((int) (frac * dataLen), dataLen - from);
            partitions.add(indexes.subList(from, from + partLen).stream().mapToInt(Integer::intValue).toArray());
            from += partLen;
        }
    }

    /** The number of partitions. */
    public int partitions() {
        return partitions.size();
    }

    /**
     * Partition {@code partition} as a dataset.
     *
     * @throws IllegalArgumentException when there is no such partition
     */
    public Partition<T> use(int partition) {
        if (partition < 0 || partition >= partitions.size()) {
            throw new IllegalArgumentException("partition=" + partition + " does not exist; there are "
                    + partitions.size() + " (0 to " + (partitions.size() - 1) + ")");
        }
        return new Partition<>(data, partitions.get(partition));
    }

    /** Fractions of {@code 1 / parts} each: one partition per rank, as the tutorial's {@code partition_dataset}. */
    public static double[] evenSizes(int parts) {
        if (parts < 1) {
            throw new IllegalArgumentException("parts=" + parts + " must be at least 1");
        }
        double[] sizes = new double[parts];
        Arrays.fill(sizes, 1.0 / parts);
        return sizes;
    }

    private static void checkSizes(double[] sizes) {
        if (sizes == null || sizes.length == 0) {
            throw new IllegalArgumentException("sizes must hold at least one fraction");
        }
        double sum = 0;
        for (double s : sizes) {
            if (!(s >= 0 && s <= 1)) {
                throw new IllegalArgumentException("every size must be a fraction in [0, 1], got "
                        + Arrays.toString(sizes));
            }
            sum += s;
        }
        if (sum > 1 + 1e-9) {
            throw new IllegalArgumentException("sizes must sum to at most 1, got " + sum + " for "
                    + Arrays.toString(sizes));
        }
    }

    /**
     * The tutorial's {@code Partition}: item {@code i} is item {@code index[i]} of the underlying dataset.
     *
     * @param <T> the type of one item
     */
    public static final class Partition<T> implements Dataset<T> {
        private final Dataset<T> data;
        private final int[] index;

        Partition(Dataset<T> data, int[] index) {
            this.data = data;
            this.index = index;
        }

        @Override
        public int size() {
            return index.length;
        }

        @Override
        public T get(int i) {
            return data.get(index[Objects.checkIndex(i, index.length)]);
        }

        /** The indices into the underlying dataset, in partition order (a copy). */
        public int[] indices() {
            return index.clone();
        }
    }
}
