package io.tensorbus.data;

import java.util.PrimitiveIterator;
import java.util.stream.IntStream;

/** The indices {@code 0, 1, ..., n-1} in order, every epoch ({@code torch.utils.data.SequentialSampler}). */
public final class SequentialSampler implements Sampler {
    private final int size;

    /**
     * A sampler over {@code size} items.
     *
     * @throws IllegalArgumentException when {@code size < 0}
     */
    public SequentialSampler(int size) {
        if (size < 0) {
            throw new IllegalArgumentException("sampler size must be >= 0, got " + size);
        }
        this.size = size;
    }

    @Override
    public int size() {
        return size;
    }

    @Override
    public PrimitiveIterator.OfInt iterator() {
        return IntStream.range(0, size).iterator();
    }
}
