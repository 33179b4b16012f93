package io.tensorbus.mutiny;

import io.smallrye.mutiny.Uni;
import io.tensorbus.distributed.autograd.DistAutograd;
import io.tensorbus.tensor.Tensor;
import java.util.List;

/**
 * Mutiny's view of a worker's {@link DistAutograd}: the backward pass and the release of a context as lazy
 * {@link Uni}s that start when subscribed, once per subscription. Opening a context and reading its gradients do not
 * wait, so they stay on the wrapped object.
 */
public final class UniDistAutograd {
    private final DistAutograd autograd;

    /**
     * Wraps {@code autograd}.
     *
     * @throws NullPointerException when {@code autograd} is null
     */
    public UniDistAutograd(DistAutograd autograd) {
        if (autograd == null) {
            throw new NullPointerException("autograd");
        }
        this.autograd = autograd;
    }

    /** The wrapped distributed autograd. */
    public DistAutograd autograd() {
        return autograd;
    }

    /** {@link DistAutograd#backwardAsync(long, List, boolean)}. */
    public Uni<Void> backward(long contextId, List<Tensor> roots, boolean retainGraph) {
        return UniProcessGroup.uni(() -> autograd.backwardAsync(contextId, roots, retainGraph));
    }

    /** {@link DistAutograd#backwardAsync(long, List, boolean, DistAutograd.Mode)}. */
    public Uni<Void> backward(long contextId, List<Tensor> roots, boolean retainGraph, DistAutograd.Mode mode) {
        return UniProcessGroup.uni(() -> autograd.backwardAsync(contextId, roots, retainGraph, mode));
    }

    /** {@link DistAutograd.Context#release()} of {@code context}. */
    public static Uni<Void> release(DistAutograd.Context context) {
        return UniProcessGroup.uni(() -> context.release());
    }
}
