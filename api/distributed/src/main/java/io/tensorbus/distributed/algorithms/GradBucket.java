package io.tensorbus.distributed.algorithms;

import io.tensorbus.tensor.Tensor;
import java.util.List;

/**
 * One bucket of gradients as a {@link CommHook} sees it (PyTorch's {@code dist.GradBucket}): a flat,
 * contiguous buffer that holds the gradients of several parameters back to back, in the order of
 * {@link #parameters()}. The buffer holds this rank's local gradients (summed over {@code noSync}
 * iterations, not yet averaged); a hook returns the tensor that should replace it.
 */
public final class GradBucket {
    private final int index;
    private final Tensor buffer;
    private final List<Tensor> parameters;
    private final List<Tensor> gradients;
    private final boolean last;

    /**
     * A bucket view, as DistributedDataParallel makes one per bucket and iteration (hooks that wrap another, and
     * tests, make their own).
     *
     * @param index the bucket's position in reduction order
     * @param buffer the flat gradient buffer
     * @param parameters the parameters whose gradients it holds, in buffer order
     * @param gradients views into {@code buffer} shaped as the parameters
     * @param last whether this bucket is reduced last in its iteration
     */
    public GradBucket(int index, Tensor buffer, List<Tensor> parameters, List<Tensor> gradients, boolean last) {
        this.index = index;
        this.buffer = buffer;
        this.parameters = List.copyOf(parameters);
        this.gradients = List.copyOf(gradients);
        this.last = last;
    }

    /** The bucket's position: 0 holds the parameters whose gradients the backward pass produces first. */
    public int index() {
        return index;
    }

    /** The flat gradient buffer, one-dimensional and contiguous; a hook may modify it in place. */
    public Tensor buffer() {
        return buffer;
    }

    /** The parameters whose gradients the buffer holds, in buffer order. */
    public List<Tensor> parameters() {
        return parameters;
    }

    /** Views into {@link #buffer()} shaped as the parameters, one per parameter. */
    public List<Tensor> gradients() {
        return gradients;
    }

    /** True for the bucket that is reduced last in each iteration. */
    public boolean isLast() {
        return last;
    }

    @Override
    public String toString() {
        return "GradBucket[" + index + ", " + parameters.size() + " parameters, " + buffer.numel() + " elements]";
    }
}
