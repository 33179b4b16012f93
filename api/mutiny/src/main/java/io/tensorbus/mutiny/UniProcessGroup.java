package io.tensorbus.mutiny;

import io.smallrye.mutiny.Uni;
import io.tensorbus.c10d.ReduceOp;
import io.tensorbus.distributed.Distributed;
import io.tensorbus.distributed.ProcessGroup;
import io.tensorbus.tensor.Tensor;
import io.vertx.core.Future;
import java.util.List;
import java.util.function.Supplier;

/**
 * Mutiny's view of a {@link ProcessGroup}: the same operations as lazy {@link Uni}s, which start the
 * operation when subscribed (each subscription starts it again, so subscribe once per call, as every
 * rank must issue each collective once).
 */
public final class UniProcessGroup {
    private final ProcessGroup group;

    /** Wraps {@code group}. */
    public UniProcessGroup(ProcessGroup group) {
        if (group == null) {
            throw new NullPointerException("group");
        }
        this.group = group;
    }

    /** The wrapped group. */
    public ProcessGroup group() {
        return group;
    }

    /** A lazy {@code Uni} of any Vert.x future-returning call. */
    public static <T> Uni<T> uni(Supplier<Future<T>> call) {
        return Uni.createFrom().completionStage(() -> call.get().toCompletionStage());
    }

    /** {@link ProcessGroup#isend(Tensor, int, int)}. */
    public Uni<Void> isend(Tensor tensor, int dst, int tag) {
        return uni(() -> group.isend(tensor, dst, tag));
    }

    /** {@link ProcessGroup#irecv(Tensor, int, int)}. */
    public Uni<Integer> irecv(Tensor tensor, int src, int tag) {
        return uni(() -> group.irecv(tensor, src, tag));
    }

    /** {@link ProcessGroup#broadcast(Tensor, int)}. */
    public Uni<Void> broadcast(Tensor tensor, int src) {
        return uni(() -> group.broadcast(tensor, src));
    }

    /** {@link ProcessGroup#allReduce(Tensor, ReduceOp)}. */
    public Uni<Void> allReduce(Tensor tensor, ReduceOp op) {
        return uni(() -> group.allReduce(tensor, op));
    }

    /** {@link ProcessGroup#reduce(Tensor, int, ReduceOp)}. */
    public Uni<Void> reduce(Tensor tensor, int dst, ReduceOp op) {
        return uni(() -> group.reduce(tensor, dst, op));
    }

    /** {@link ProcessGroup#allGather(List, Tensor)}. */
    public Uni<Void> allGather(List<Tensor> outputs, Tensor input) {
        return uni(() -> group.allGather(outputs, input));
    }

    /** {@link ProcessGroup#gather(Tensor, List, int)}. */
    public Uni<Void> gather(Tensor input, List<Tensor> outputs, int dst) {
        return uni(() -> group.gather(input, outputs, dst));
    }

    /** {@link ProcessGroup#scatter(Tensor, List, int)}. */
    public Uni<Void> scatter(Tensor output, List<Tensor> inputs, int src) {
        return uni(() -> group.scatter(output, inputs, src));
    }

    /** {@link ProcessGroup#reduceScatter(Tensor, List, ReduceOp)}. */
    public Uni<Void> reduceScatter(Tensor output, List<Tensor> inputs, ReduceOp op) {
        return uni(() -> group.reduceScatter(output, inputs, op));
    }

    /** {@link ProcessGroup#allToAll(List, List)}. */
    public Uni<Void> allToAll(List<Tensor> outputs, List<Tensor> inputs) {
        return uni(() -> group.allToAll(outputs, inputs));
    }

    /** {@link ProcessGroup#barrier()}. */
    public Uni<Void> barrier() {
        return uni(group::barrier);
    }

    /** {@link ProcessGroup#allGatherObject(Object)}. */
    public Uni<List<Object>> allGatherObject(Object object) {
        return uni(() -> group.allGatherObject(object));
    }

    /** {@link Distributed#newGroup(ProcessGroup, int...)} of this group. */
    public Uni<ProcessGroup> newGroup(int... ranks) {
        return uni(() -> Distributed.newGroup(group, ranks));
    }
}
