package io.tensorbus.it.sample;

import io.tensorbus.c10d.ReduceOp;
import io.tensorbus.spi.Backend;
import io.tensorbus.spi.DeviceBuffer;
import io.vertx.core.Future;
import java.util.List;

/** The backend {@link TracingBackendProvider} creates: counts each call, then hands it to the wrapped backend. */
final class TracingBackend implements Backend {
    private final Backend inner;

    TracingBackend(Backend inner) {
        this.inner = inner;
    }

    /** The provider's name, so that subgroups ({@code newGroup}) are created through this plugin too. */
    @Override
    public String name() {
        return TracingBackendProvider.NAME;
    }

    @Override
    public int rank() {
        return inner.rank();
    }

    @Override
    public int size() {
        return inner.size();
    }

    @Override
    public Future<Void> send(DeviceBuffer buffer, int dst, int tag) {
        TracingBackendProvider.record("send");
        return inner.send(buffer, dst, tag);
    }

    @Override
    public Future<Integer> recv(DeviceBuffer buffer, int src, int tag) {
        TracingBackendProvider.record("recv");
        return inner.recv(buffer, src, tag);
    }

    @Override
    public Future<Void> broadcast(DeviceBuffer buffer, int root) {
        TracingBackendProvider.record("broadcast");
        return inner.broadcast(buffer, root);
    }

    @Override
    public Future<Void> allReduce(DeviceBuffer buffer, ReduceOp op) {
        TracingBackendProvider.record("allReduce");
        return inner.allReduce(buffer, op);
    }

    @Override
    public Future<Void> reduce(DeviceBuffer buffer, int root, ReduceOp op) {
        TracingBackendProvider.record("reduce");
        return inner.reduce(buffer, root, op);
    }

    @Override
    public Future<Void> allGather(List<DeviceBuffer> outputs, DeviceBuffer input) {
        TracingBackendProvider.record("allGather");
        return inner.allGather(outputs, input);
    }

    @Override
    public Future<Void> gather(List<DeviceBuffer> outputs, DeviceBuffer input, int root) {
        TracingBackendProvider.record("gather");
        return inner.gather(outputs, input, root);
    }

    @Override
    public Future<Void> scatter(DeviceBuffer output, List<DeviceBuffer> inputs, int root) {
        TracingBackendProvider.record("scatter");
        return inner.scatter(output, inputs, root);
    }

    @Override
    public Future<Void> reduceScatter(DeviceBuffer output, List<DeviceBuffer> inputs, ReduceOp op) {
        TracingBackendProvider.record("reduceScatter");
        return inner.reduceScatter(output, inputs, op);
    }

    @Override
    public Future<Void> allToAll(List<DeviceBuffer> outputs, List<DeviceBuffer> inputs) {
        TracingBackendProvider.record("allToAll");
        return inner.allToAll(outputs, inputs);
    }

    @Override
    public Future<Void> barrier() {
        TracingBackendProvider.record("barrier");
        return inner.barrier();
    }

    @Override
    public Future<Void> close() {
        TracingBackendProvider.record("close");
        return inner.close();
    }

    @Override
    public String toString() {
        return "traced(" + inner + ")";
    }
}
