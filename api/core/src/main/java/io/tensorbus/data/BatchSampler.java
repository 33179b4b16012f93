package io.tensorbus.data;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.Objects;

/**
 * Groups the indices of a {@link Sampler} into batches of {@code batchSize} ({@code torch.utils.data.BatchSampler}):
 * the last batch is smaller when the size does not divide evenly, or left out when {@code dropLast}.
 */
public final class BatchSampler implements Iterable<int[]> {
    private final Sampler sampler;
    private final int batchSize;
    private final boolean dropLast;

    /**
     * Batches over {@code sampler}.
     *
     * @throws IllegalArgumentException when {@code batchSize < 1}
     */
    public BatchSampler(Sampler sampler, int batchSize, boolean dropLast) {
        this.sampler = Objects.requireNonNull(sampler, "sampler");
        if (batchSize < 1) {
            throw new IllegalArgumentException("batchSize must be >= 1, got " + batchSize);
        }
        this.batchSize = batchSize;
        this.dropLast = dropLast;
    }

    /** The number of batches per epoch ({@code len(batch_sampler)}). */
    public int size() {
        int n = sampler.size();
        return dropLast ? n / batchSize : (n + batchSize - 1) / batchSize;
    }

    /** The indices per batch (the last batch may hold fewer). */
    public int batchSize() {
        return batchSize;
    }

    /** Whether an incomplete last batch is left out. */
    public boolean dropLast() {
        return dropLast;
    }

    /** The underlying sampler. */
    public Sampler sampler() {
        return sampler;
    }

    /** Selects the epoch of the underlying sampler (see {@link Sampler#setEpoch(int)}). */
    public void setEpoch(int epoch) {
        sampler.setEpoch(epoch);
    }

    /** The batches of the current epoch, each a fresh array. */
    public List<int[]> batches() {
        int[] all = sampler.toArray();
        int count = dropLast ? all.length / batchSize : (all.length + batchSize - 1) / batchSize;
        List<int[]> out = new ArrayList<>(count);
        for (int b = 0; b < count; b++) {
            out.add(Arrays.copyOfRange(all, b * batchSize, Math.min(all.length, (b + 1) * batchSize)));
        }
        return out;
    }

    @Override
    public Iterator<int[]> iterator() {
        return batches().iterator();
    }
}
