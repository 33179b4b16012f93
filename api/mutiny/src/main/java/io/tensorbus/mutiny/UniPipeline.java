package io.tensorbus.mutiny;

import io.smallrye.mutiny.Uni;
import io.tensorbus.distributed.pipeline.Pipeline;
import io.tensorbus.tensor.Tensor;

/**
 * Mutiny's view of a {@link Pipeline}: a forward pass through the stages as a lazy {@link Uni} that streams the
 * batch when subscribed, once per subscription. The pipeline stays the caller's to close.
 */
public final class UniPipeline {
    private final Pipeline pipeline;

    /**
     * Wraps {@code pipeline}.
     *
     * @throws NullPointerException when {@code pipeline} is null
     */
    public UniPipeline(Pipeline pipeline) {
        if (pipeline == null) {
            throw new NullPointerException("pipeline");
        }
        this.pipeline = pipeline;
    }

    /** The wrapped pipeline. */
    public Pipeline pipeline() {
        return pipeline;
    }

    /** {@link Pipeline#forwardAsync(Tensor)}: the last stage's outputs of the whole batch. */
    public Uni<Tensor> forward(Tensor batch) {
        return UniProcessGroup.uni(() -> pipeline.forwardAsync(batch));
    }
}
