package io.tensorbus.mutiny;

import io.smallrye.mutiny.Uni;
import io.tensorbus.c10d.ReduceOp;
import io.tensorbus.distributed.Distributed;
import io.tensorbus.distributed.GroupRank;
import io.tensorbus.distributed.P2POp;
import io.tensorbus.distributed.ProcessGroup;
import io.tensorbus.tensor.Tensor;
import io.vertx.core.Future;
import java.time.Duration;
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

    /** {@link ProcessGroup#isend(Tensor, int)}. */
    public Uni<Void> isend(Tensor tensor, int dst) {
        return uni(() -> group.isend(tensor, dst));
    }

    /** {@link ProcessGroup#isend(Tensor, GroupRank, int)}. */
    public Uni<Void> isend(Tensor tensor, GroupRank dst, int tag) {
        return uni(() -> group.isend(tensor, dst, tag));
    }

    /** {@link ProcessGroup#irecv(Tensor)}. */
    public Uni<Integer> irecv(Tensor tensor) {
        return uni(() -> group.irecv(tensor));
    }

    /** {@link ProcessGroup#irecv(Tensor, int)}. */
    public Uni<Integer> irecv(Tensor tensor, int src) {
        return uni(() -> group.irecv(tensor, src));
    }

    /** {@link ProcessGroup#irecv(Tensor, GroupRank, int)}. */
    public Uni<Integer> irecv(Tensor tensor, GroupRank src, int tag) {
        return uni(() -> group.irecv(tensor, src, tag));
    }

    /** {@link ProcessGroup#broadcast(Tensor, GroupRank)}. */
    public Uni<Void> broadcast(Tensor tensor, GroupRank src) {
        return uni(() -> group.broadcast(tensor, src));
    }

    /** {@link ProcessGroup#allReduce(Tensor)}. */
    public Uni<Void> allReduce(Tensor tensor) {
        return uni(() -> group.allReduce(tensor));
    }

    /** {@link ProcessGroup#reduce(Tensor, int)}. */
    public Uni<Void> reduce(Tensor tensor, int dst) {
        return uni(() -> group.reduce(tensor, dst));
    }

    /** {@link ProcessGroup#reduce(Tensor, GroupRank, ReduceOp)}. */
    public Uni<Void> reduce(Tensor tensor, GroupRank dst, ReduceOp op) {
        return uni(() -> group.reduce(tensor, dst, op));
    }

    /** {@link ProcessGroup#allGatherIntoTensor(Tensor, Tensor)}. */
    public Uni<Void> allGatherIntoTensor(Tensor output, Tensor input) {
        return uni(() -> group.allGatherIntoTensor(output, input));
    }

    /** {@link ProcessGroup#gather(Tensor, List, GroupRank)}. */
    public Uni<Void> gather(Tensor input, List<Tensor> outputs, GroupRank dst) {
        return uni(() -> group.gather(input, outputs, dst));
    }

    /** {@link ProcessGroup#scatter(Tensor, List, GroupRank)}. */
    public Uni<Void> scatter(Tensor output, List<Tensor> inputs, GroupRank src) {
        return uni(() -> group.scatter(output, inputs, src));
    }

    /** {@link ProcessGroup#reduceScatter(Tensor, List)}. */
    public Uni<Void> reduceScatter(Tensor output, List<Tensor> inputs) {
        return uni(() -> group.reduceScatter(output, inputs));
    }

    /** {@link ProcessGroup#allReduceCoalesced(List, ReduceOp)}. */
    public Uni<Void> allReduceCoalesced(List<Tensor> tensors, ReduceOp op) {
        return uni(() -> group.allReduceCoalesced(tensors, op));
    }

    /** {@link ProcessGroup#allGatherCoalesced(List, List)}. */
    public Uni<Void> allGatherCoalesced(List<List<Tensor>> outputs, List<Tensor> inputs) {
        return uni(() -> group.allGatherCoalesced(outputs, inputs));
    }

    /** {@link ProcessGroup#reduceScatterTensor(Tensor, Tensor)}. */
    public Uni<Void> reduceScatterTensor(Tensor output, Tensor input) {
        return uni(() -> group.reduceScatterTensor(output, input));
    }

    /** {@link ProcessGroup#reduceScatterTensor(Tensor, Tensor, ReduceOp)}. */
    public Uni<Void> reduceScatterTensor(Tensor output, Tensor input, ReduceOp op) {
        return uni(() -> group.reduceScatterTensor(output, input, op));
    }

    /** {@link ProcessGroup#allToAllSingle(Tensor, Tensor)}. */
    public Uni<Void> allToAllSingle(Tensor output, Tensor input) {
        return uni(() -> group.allToAllSingle(output, input));
    }

    /** {@link ProcessGroup#allToAllSingle(Tensor, Tensor, int[], int[])}. */
    public Uni<Void> allToAllSingle(Tensor output, Tensor input, int[] outputSplitSizes, int[] inputSplitSizes) {
        return uni(() -> group.allToAllSingle(output, input, outputSplitSizes, inputSplitSizes));
    }

    /** {@link ProcessGroup#monitoredBarrier(Duration, boolean)}. */
    public Uni<Void> monitoredBarrier(Duration timeout, boolean waitAllRanks) {
        return uni(() -> group.monitoredBarrier(timeout, waitAllRanks));
    }

    /** {@link ProcessGroup#broadcastObjectList(List, int)}. */
    public Uni<List<Object>> broadcastObjectList(List<Object> objects, int src) {
        return uni(() -> group.broadcastObjectList(objects, src));
    }

    /** {@link ProcessGroup#broadcastObjectList(List, GroupRank)}. */
    public Uni<List<Object>> broadcastObjectList(List<Object> objects, GroupRank src) {
        return uni(() -> group.broadcastObjectList(objects, src));
    }

    /** {@link ProcessGroup#gatherObject(Object, int)}. */
    public Uni<List<Object>> gatherObject(Object object, int dst) {
        return uni(() -> group.gatherObject(object, dst));
    }

    /** {@link ProcessGroup#gatherObject(Object, GroupRank)}. */
    public Uni<List<Object>> gatherObject(Object object, GroupRank dst) {
        return uni(() -> group.gatherObject(object, dst));
    }

    /** {@link ProcessGroup#scatterObjectList(List, List, int)}. */
    public Uni<List<Object>> scatterObjectList(List<Object> output, List<Object> inputs, int src) {
        return uni(() -> group.scatterObjectList(output, inputs, src));
    }

    /** {@link ProcessGroup#scatterObjectList(List, List, GroupRank)}. */
    public Uni<List<Object>> scatterObjectList(List<Object> output, List<Object> inputs, GroupRank src) {
        return uni(() -> group.scatterObjectList(output, inputs, src));
    }

    /** {@link ProcessGroup#sendObjectList(List, int)}. */
    public Uni<Void> sendObjectList(List<Object> objects, int dst) {
        return uni(() -> group.sendObjectList(objects, dst));
    }

    /** {@link ProcessGroup#sendObjectList(List, GroupRank)}. */
    public Uni<Void> sendObjectList(List<Object> objects, GroupRank dst) {
        return uni(() -> group.sendObjectList(objects, dst));
    }

    /** {@link ProcessGroup#recvObjectList(List, int)}. */
    public Uni<Integer> recvObjectList(List<Object> objects, int src) {
        return uni(() -> group.recvObjectList(objects, src));
    }

    /** {@link ProcessGroup#recvObjectList(List, GroupRank)}. */
    public Uni<Integer> recvObjectList(List<Object> objects, GroupRank src) {
        return uni(() -> group.recvObjectList(objects, src));
    }

    /**
     * {@link ProcessGroup#batchIsendIrecv(List)}: issues every operation when subscribed, as the group does, and
     * completes when all have, or fails with the first failure.
     */
    public Uni<Void> batchIsendIrecv(List<P2POp> ops) {
        return uni(() -> Future.all(group.batchIsendIrecv(ops)).mapEmpty());
    }

    /** {@link ProcessGroup#destroy()}. */
    public Uni<Void> destroy() {
        return uni(group::destroy);
    }

    /** {@link Distributed#newGroup(ProcessGroup, int...)} of this group. */
    public Uni<ProcessGroup> newGroup(int... ranks) {
        return uni(() -> Distributed.newGroup(group, ranks));
    }
}
