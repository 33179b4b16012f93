package io.tensorbus.autograd;

import io.tensorbus.internal.tensor.Shapes;
import io.tensorbus.internal.tensor.TensorInternals;
import io.tensorbus.tensor.Tensor;

/**
 * A tensor kept for the backward pass together with its storage version at save time, so that an
 * in-place change between forward and backward is reported instead of silently giving wrong gradients.
 */
public final class SavedTensor {
    private final Tensor tensor;
    private final int version;

    private SavedTensor(Tensor tensor) {
        this.tensor = tensor;
        this.version = TensorInternals.storage(tensor).version();
    }

    /** Saves {@code tensor} (may be null, for optional inputs such as a missing bias). */
    public static SavedTensor save(Tensor tensor) {
        return tensor == null ? null : new SavedTensor(tensor);
    }

    /**
     * Returns the saved tensor.
     *
     * @throws IllegalStateException when it was modified in place after it was saved
     */
    public Tensor unpack() {
        int now = TensorInternals.storage(tensor).version();
        if (now != version) {
            throw new IllegalStateException("one of the variables needed for gradient computation has been "
                    + "modified by an inplace operation: [" + tensor.dtype() + " " + Shapes.str(tensor.shape())
                    + "] is at version " + now + "; expected version " + version + " instead. Use an out-of-place"
                    + " op (add instead of addi) or clone() the tensor before changing it.");
        }
        return tensor;
    }
}
