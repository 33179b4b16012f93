package io.tensorbus.data;

import java.util.Arrays;
import java.util.PrimitiveIterator;

/**
 * The order in which a {@link DataLoader} visits a dataset, as PyTorch's {@code torch.utils.data.Sampler}: an
 * iterable of indices. Samplers whose order changes per epoch ({@link RandomSampler}) take the epoch through
 * {@link #setEpoch(int)}, as {@code DistributedSampler.set_epoch}, so that every epoch is reproducible on its own.
 */
public interface Sampler extends Iterable<Integer> {
    /** The number of indices one iteration yields. */
    int size();

    /** The indices of the current epoch, in order. */
    @Override
    PrimitiveIterator.OfInt iterator();

    /**
     * Selects the epoch whose order the next {@link #iterator()} yields; samplers with a fixed order ignore it.
     *
     * @throws IllegalArgumentException when {@code epoch < 0}
     */
    default void setEpoch(int epoch) {
        if (epoch < 0) {
            throw new IllegalArgumentException("epoch must be >= 0, got " + epoch);
        }
    }

    /** All indices of the current epoch as an array. */
    default int[] toArray() {
        int[] out = new int[size()];
        PrimitiveIterator.OfInt it = iterator();
        int n = 0;
        while (it.hasNext() && n < out.length) {
            out[n++] = it.nextInt();
        }
        return n == out.length ? out : Arrays.copyOf(out, n);
    }
}
