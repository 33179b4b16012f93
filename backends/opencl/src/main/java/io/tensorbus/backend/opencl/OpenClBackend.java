package io.tensorbus.backend.opencl;

import io.tensorbus.c10d.ReduceOp;
import io.tensorbus.spi.Backend;
import io.tensorbus.spi.DeviceBuffer;
import io.vertx.core.Future;
import java.util.List;

/**
 * The {@code opencl} backend of one group: the transport's backend, restricted to OpenCL buffers as PyTorch's
 * NCCL backend is to CUDA tensors (a host buffer here is a mistake worth naming, not something to stage
 * silently).
 */
final class OpenClBackend implements Backend {
    private final Backend transport;

    OpenClBackend(Backend transport) {
        this.transport = transport;
    }

    @Override
    public String name() {
        return OpenClBackendProvider.NAME;
    }

    @Override
    public int rank() {
        return transport.rank();
    }

    @Override
    public int size() {
        return transport.size();
    }

    @Override
    public Future<Void> send(DeviceBuffer buffer, int dst, int tag) {
        String bad = check("send", buffer);
        return bad != null ? refuse(bad) : transport.send(buffer, dst, tag);
    }

    @Override
    public Future<Integer> recv(DeviceBuffer buffer, int src, int tag) {
        String bad = check("recv", buffer);
        return bad != null ? refuse(bad) : transport.recv(buffer, src, tag);
    }

    @Override
    public Future<Void> broadcast(DeviceBuffer buffer, int root) {
        String bad = check("broadcast", buffer);
        return bad != null ? refuse(bad) : transport.broadcast(buffer, root);
    }

    @Override
    public Future<Void> allReduce(DeviceBuffer buffer, ReduceOp op) {
        String bad = check("allReduce", buffer);
        return bad != null ? refuse(bad) : transport.allReduce(buffer, op);
    }

    @Override
    public Future<Void> reduce(DeviceBuffer buffer, int root, ReduceOp op) {
        String bad = check("reduce", buffer);
        return bad != null ? refuse(bad) : transport.reduce(buffer, root, op);
    }

    @Override
    public Future<Void> allGather(List<DeviceBuffer> outputs, DeviceBuffer input) {
        String bad = check("allGather", outputs, input);
        return bad != null ? refuse(bad) : transport.allGather(outputs, input);
    }

    @Override
    public Future<Void> gather(List<DeviceBuffer> outputs, DeviceBuffer input, int root) {
        String bad = check("gather", outputs, input);
        return bad != null ? refuse(bad) : transport.gather(outputs, input, root);
    }

    @Override
    public Future<Void> scatter(DeviceBuffer output, List<DeviceBuffer> inputs, int root) {
        String bad = check("scatter", inputs, output);
        return bad != null ? refuse(bad) : transport.scatter(output, inputs, root);
    }

    @Override
    public Future<Void> reduceScatter(DeviceBuffer output, List<DeviceBuffer> inputs, ReduceOp op) {
        String bad = check("reduceScatter", inputs, output);
        return bad != null ? refuse(bad) : transport.reduceScatter(output, inputs, op);
    }

    @Override
    public Future<Void> allToAll(List<DeviceBuffer> outputs, List<DeviceBuffer> inputs) {
        String bad = check("allToAll", outputs, null);
        bad = bad != null ? bad : check("allToAll", inputs, null);
        return bad != null ? refuse(bad) : transport.allToAll(outputs, inputs);
    }

    /** Only OpenCL buffers, as NCCL takes only CUDA memory. */
    @Override
    public boolean acceptsHostMemory() {
        return false;
    }

    @Override
    public Future<Void> barrier() {
        return transport.barrier();
    }

    @Override
    public Future<Void> close() {
        return transport.close();
    }

    /** Why {@code buffer} cannot be used by {@code op}, or null. */
    private static String check(String op, DeviceBuffer buffer) {
        if (buffer instanceof OpenClBuffer) {
            return null;
        }
        return op + " on the opencl backend needs OpenCL buffers, but got " + buffer + " on " + buffer.device()
                + " (use the tcp backend for host memory, or move the tensor to an opencl device)";
    }

    private static String check(String op, List<DeviceBuffer> buffers, DeviceBuffer other) {
        String bad = other == null ? null : check(op, other);
        for (int i = 0; bad == null && i < buffers.size(); i++) {
            bad = check(op, buffers.get(i));
        }
        return bad;
    }

    private static <T> Future<T> refuse(String why) {
        return Future.failedFuture(new IllegalArgumentException(why));
    }
}
