package io.tensorbus.parallel;

import io.tensorbus.c10d.ReduceOp;
import io.tensorbus.spi.Backend;
import io.tensorbus.spi.BackendOptions;
import io.tensorbus.spi.BackendProvider;
import io.tensorbus.spi.DeviceBuffer;
import io.vertx.core.Future;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The backend "recording": the tcp backend with every all-reduce written to {@link #EVENTS} as
 * {@code "rank R allReduce N"} at the moment it is issued, so tests can order communication against
 * compute.
 */
public final class RecordingBackendProvider implements BackendProvider {
    /** Events of all ranks of the JVM, in the order they happened; tests clear it. */
    static final List<String> EVENTS = new CopyOnWriteArrayList<>();

    @Override
    public String name() {
        return "recording";
    }

    @Override
    public boolean isAvailable() {
        return true;
    }

    @Override
    public Throwable unavailabilityCause() {
        return null;
    }

    @Override
    public Future<Backend> create(BackendOptions options) {
        return BackendProvider.named("tcp").create(options).map(Recording::new);
    }

    private record Recording(Backend tcp) implements Backend {
        @Override
        public String name() {
            return "recording";
        }

        @Override
        public int rank() {
            return tcp.rank();
        }

        @Override
        public int size() {
            return tcp.size();
        }

        @Override
        public Future<Void> send(DeviceBuffer buffer, int dst, int tag) {
            return tcp.send(buffer, dst, tag);
        }

        @Override
        public Future<Integer> recv(DeviceBuffer buffer, int src, int tag) {
            return tcp.recv(buffer, src, tag);
        }

        @Override
        public Future<Void> broadcast(DeviceBuffer buffer, int root) {
            return tcp.broadcast(buffer, root);
        }

        @Override
        public Future<Void> allReduce(DeviceBuffer buffer, ReduceOp op) {
            EVENTS.add("rank " + rank() + " allReduce " + buffer.numel());
            return tcp.allReduce(buffer, op);
        }

        @Override
        public Future<Void> reduce(DeviceBuffer buffer, int root, ReduceOp op) {
            return tcp.reduce(buffer, root, op);
        }

        @Override
        public Future<Void> allGather(List<DeviceBuffer> outputs, DeviceBuffer input) {
            return tcp.allGather(outputs, input);
        }

        @Override
        public Future<Void> gather(List<DeviceBuffer> outputs, DeviceBuffer input, int root) {
            return tcp.gather(outputs, input, root);
        }

        @Override
        public Future<Void> scatter(DeviceBuffer output, List<DeviceBuffer> inputs, int root) {
            return tcp.scatter(output, inputs, root);
        }

        @Override
        public Future<Void> reduceScatter(DeviceBuffer output, List<DeviceBuffer> inputs, ReduceOp op) {
            return tcp.reduceScatter(output, inputs, op);
        }

        @Override
        public Future<Void> allToAll(List<DeviceBuffer> outputs, List<DeviceBuffer> inputs) {
            return tcp.allToAll(outputs, inputs);
        }

        @Override
        public Future<Void> barrier() {
            return tcp.barrier();
        }

        @Override
        public Future<Void> close() {
            return tcp.close();
        }
    }
}
