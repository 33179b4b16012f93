package io.tensorbus.data;

import io.tensorbus.tensor.Generator;
import io.tensorbus.tensor.Tensor;
import java.util.Arrays;
import java.util.PrimitiveIterator;

/**
 * A random permutation of {@code 0..n-1} per epoch ({@code torch.utils.data.RandomSampler}), reproducible from
 * a seed and the epoch: epoch {@code e} is {@code Tensor.randperm(new Generator(seed + e * 0x9E3779B97F4A7C15L), n)},
 * so epoch 0 is {@code randperm} from {@code new Generator(seed)}, each epoch differs, and any epoch can be
 * replayed by {@link #setEpoch(int)} without replaying the ones before it.
 */
public final class RandomSampler implements Sampler {
    private static final long GOLDEN = 0x9E3779B97F4A7C15L;

    private final int size;
    private final long seed;
    private volatile int epoch;

    /**
     * A sampler over {@code size} items starting at epoch 0.
     *
     * @throws IllegalArgumentException when {@code size < 0}
     */
    public RandomSampler(int size, long seed) {
        if (size < 0) {
            throw new IllegalArgumentException("sampler size must be >= 0, got " + size);
        }
        this.size = size;
        this.seed = seed;
    }

    @Override
    public int size() {
        return size;
    }

    /** The seed the permutations derive from. */
    public long seed() {
        return seed;
    }

    /** The epoch the next {@link #iterator()} shuffles for. */
    public int epoch() {
        return epoch;
    }

    @Override
    public void setEpoch(int epoch) {
        Sampler.super.setEpoch(epoch);
        this.epoch = epoch;
    }

    @Override
    public PrimitiveIterator.OfInt iterator() {
        return Arrays.stream(toArray()).iterator();
    }

    @Override
    public int[] toArray() {
        return Tensor.randperm(new Generator(seed + GOLDEN * epoch), size).toIntArray();
    }
}
