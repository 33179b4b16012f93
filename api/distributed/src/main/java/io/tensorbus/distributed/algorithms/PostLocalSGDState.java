package io.tensorbus.distributed.algorithms;

import io.tensorbus.distributed.ProcessGroup;
import io.tensorbus.tensor.Tensor;
import io.vertx.core.Future;
import java.util.Objects;

/**
 * The state of {@link CommHooks#postLocalSGD} ({@code post_localSGD_hook.PostLocalSGDState}): DDP's gradients are
 * all-reduced over the whole group for the first {@code startLocalSGDIter} iterations, then only within
 * {@code subgroup} (each machine's ranks, say), or not at all; a
 * {@link io.tensorbus.distributed.algorithms.PeriodicModelAverager} (through
 * {@code io.tensorbus.distributed.optim.PostLocalSGDOptimizer}) then averages the models every few steps.
 *
 * <p>PyTorch makes per-machine subgroups itself when none is given; here pass one
 * ({@code Distributed.newSubgroups(pg, ranksPerMachine).await().current().orElseThrow()}) or turn the gradient
 * all-reduce off.
 */
public final class PostLocalSGDState {
    private final ProcessGroup subgroup;
    private final long startLocalSGDIter;
    private final boolean postLocalGradientAllReduce;
    private long iter;

    /**
     * A state that switches to local SGD after {@code startLocalSGDIter} iterations.
     *
     * @param subgroup the group whose members still all-reduce gradients after the switch; null only when
     *     {@code postLocalGradientAllReduce} is false
     * @param startLocalSGDIter the iterations of global all-reduce first, at least 0
     * @param postLocalGradientAllReduce whether gradients are all-reduced within {@code subgroup} after the switch
     * @throws IllegalArgumentException for a negative start, or no subgroup while the all-reduce after the switch is on
     */
    public PostLocalSGDState(ProcessGroup subgroup, long startLocalSGDIter, boolean postLocalGradientAllReduce) {
        if (startLocalSGDIter < 0) {
            throw new IllegalArgumentException("startLocalSGDIter must be at least 0, got " + startLocalSGDIter);
        }
        if (postLocalGradientAllReduce && subgroup == null) {
            throw new IllegalArgumentException("postLocalGradientAllReduce needs the subgroup to all-reduce within;"
                    + " pass one, or false to keep local gradients after the switch");
        }
        if (subgroup != null && !subgroup.isMember()) {
            throw new IllegalArgumentException("this process is not a member of the subgroup " + subgroup);
        }
        this.subgroup = subgroup;
        this.startLocalSGDIter = startLocalSGDIter;
        this.postLocalGradientAllReduce = postLocalGradientAllReduce;
    }

    /** The iterations completed so far: local SGD starts when it reaches {@code startLocalSGDIter}. */
    public synchronized long iteration() {
        return iter;
    }

    /** The hook's body: all-reduce over {@code group}, then within the subgroup or not at all. */
    synchronized Future<Tensor> apply(ProcessGroup group, GradBucket bucket) {
        Objects.requireNonNull(bucket, "bucket");
        if (iter < startLocalSGDIter) {
            if (bucket.isLast()) {
                iter++;
            }
            return CommHooks.allReduce().apply(group, bucket);
        }
        if (!postLocalGradientAllReduce) {
            return Future.succeededFuture(bucket.buffer());
        }
        return CommHooks.allReduce().apply(subgroup, bucket);
    }
}
