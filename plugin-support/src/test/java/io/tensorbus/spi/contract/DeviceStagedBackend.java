package io.tensorbus.spi.contract;

import io.tensorbus.Device;
import io.tensorbus.c10d.ReduceOp;
import io.tensorbus.spi.Backend;
import io.tensorbus.spi.DeviceBuffer;
import io.tensorbus.spi.DeviceRuntime;
import io.vertx.core.Future;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * Runs the contract on device memory: every host buffer a test hands in is copied to a new buffer on
 * {@code device} before the backend sees it, and the buffers the operation writes are copied back when it
 * succeeds, so the contract's assertions on host memory check what the backend did to device memory. The copy
 * in finishes before the backend is called, which keeps the order of calls the tests rely on.
 */
public final class DeviceStagedBackend implements Backend {
    private static final long COPY_SECONDS = 30;

    private final Backend backend;
    private final DeviceRuntime runtime;
    private final Device device;

    /** Stages {@code backend}'s buffers on {@code device}, through {@code runtime}. */
    public DeviceStagedBackend(Backend backend, DeviceRuntime runtime, Device device) {
        this.backend = backend;
        this.runtime = runtime;
        this.device = device;
    }

    @Override
    public String name() {
        return backend.name();
    }

    @Override
    public int rank() {
        return backend.rank();
    }

    @Override
    public int size() {
        return backend.size();
    }

    @Override
    public Future<Void> send(DeviceBuffer buffer, int dst, int tag) {
        Staged s = new Staged();
        return s.run(() -> backend.send(s.in(buffer), dst, tag));
    }

    @Override
    public Future<Integer> recv(DeviceBuffer buffer, int src, int tag) {
        Staged s = new Staged();
        return s.run(() -> backend.recv(s.out(buffer), src, tag));
    }

    @Override
    public Future<Void> broadcast(DeviceBuffer buffer, int root) {
        Staged s = new Staged();
        return s.run(() -> backend.broadcast(s.out(buffer), root));
    }

    @Override
    public Future<Void> allReduce(DeviceBuffer buffer, ReduceOp op) {
        Staged s = new Staged();
        return s.run(() -> backend.allReduce(s.out(buffer), op));
    }

    @Override
    public Future<Void> reduce(DeviceBuffer buffer, int root, ReduceOp op) {
        Staged s = new Staged();
        return s.run(() -> backend.reduce(s.out(buffer), root, op));
    }

    @Override
    public Future<Void> allGather(List<DeviceBuffer> outputs, DeviceBuffer input) {
        Staged s = new Staged();
        return s.run(() -> backend.allGather(s.out(outputs), s.in(input)));
    }

    @Override
    public Future<Void> gather(List<DeviceBuffer> outputs, DeviceBuffer input, int root) {
        Staged s = new Staged();
        return s.run(() -> backend.gather(s.out(outputs), s.in(input), root));
    }

    @Override
    public Future<Void> scatter(DeviceBuffer output, List<DeviceBuffer> inputs, int root) {
        Staged s = new Staged();
        return s.run(() -> backend.scatter(s.out(output), s.in(inputs), root));
    }

    @Override
    public Future<Void> reduceScatter(DeviceBuffer output, List<DeviceBuffer> inputs, ReduceOp op) {
        Staged s = new Staged();
        return s.run(() -> backend.reduceScatter(s.out(output), s.in(inputs), op));
    }

    @Override
    public Future<Void> allToAll(List<DeviceBuffer> outputs, List<DeviceBuffer> inputs) {
        Staged s = new Staged();
        return s.run(() -> backend.allToAll(s.out(outputs), s.in(inputs)));
    }

    @Override
    public Future<Void> barrier() {
        return backend.barrier();
    }

    @Override
    public Future<Void> close() {
        return backend.close();
    }

    /** The device copies of one operation: made before it runs, copied back and released after. */
    private final class Staged {
        private final List<DeviceBuffer> made = new ArrayList<>();
        private final List<DeviceBuffer[]> results = new ArrayList<>();

        DeviceBuffer in(DeviceBuffer host) {
            DeviceBuffer d = runtime.allocate(device, host.dtype(), host.shape());
            made.add(d);
            try {
                runtime.copy(host, 0, d, 0, host.byteSize()).get(COPY_SECONDS, TimeUnit.SECONDS);
            } catch (Exception e) {
                throw new IllegalStateException("copying " + host + " to " + device + " failed", e);
            }
            return d;
        }

        List<DeviceBuffer> in(List<DeviceBuffer> hosts) {
            List<DeviceBuffer> out = new ArrayList<>();
            for (DeviceBuffer h : hosts) {
                out.add(in(h));
            }
            return out;
        }

        DeviceBuffer out(DeviceBuffer host) {
            DeviceBuffer d = in(host);
            results.add(new DeviceBuffer[] {d, host});
            return d;
        }

        List<DeviceBuffer> out(List<DeviceBuffer> hosts) {
            List<DeviceBuffer> out = new ArrayList<>();
            for (DeviceBuffer h : hosts) {
                out.add(out(h));
            }
            return out;
        }

        <T> Future<T> run(Supplier<Future<T>> op) {
            Future<T> f;
            try {
                f = op.get();
            } catch (RuntimeException e) {
                release();
                return Future.failedFuture(e);
            }
            return f.compose(v -> copyBack().map(v), e -> {
                release();
                return Future.failedFuture(e);
            });
        }

        private Future<Void> copyBack() {
            List<Future<Void>> copies = new ArrayList<>();
            for (DeviceBuffer[] r : results) {
                copies.add(Future.fromCompletionStage(runtime.copy(r[0], 0, r[1], 0, r[1].byteSize())));
            }
            return Future.all(copies).<Void>mapEmpty().onComplete(ar -> release());
        }

        private void release() {
            made.forEach(runtime::release);
        }
    }
}
