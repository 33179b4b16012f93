package io.tensorbus.distributed.impl;

import io.tensorbus.Device;
import io.tensorbus.c10d.ReduceOp;
import io.tensorbus.spi.Backend;
import io.tensorbus.spi.DeviceBuffer;
import io.tensorbus.spi.DeviceRuntime;
import io.tensorbus.spi.DeviceRuntimeProvider;
import io.vertx.core.Future;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

/**
 * A backend that takes only its device's memory (NCCL, opencl) as host messages see it: each host buffer of an
 * operation is copied to a buffer on the group's device first and back after, as PyTorch stages the object
 * collectives through the current CUDA device. Device buffers pass through untouched. The object collectives use
 * it; tensors never need it.
 *
 * <p>The operation is issued as soon as its uploads are queued: the device runs its queue in order (an OpenCL
 * in-order queue, a CUDA stream), so the backend's own device work on a buffer comes after the upload, as
 * PyTorch relies on stream order.
 */
public final class HostStagingBackend implements Backend {
    private final Backend backend;
    private final Device device;
    private final DeviceRuntime runtime;

    private HostStagingBackend(Backend backend, Device device) {
        this.backend = backend;
        this.device = device;
        this.runtime = DeviceRuntimeProvider.of(device);
    }

    /**
     * {@code backend} itself when it takes host memory, else the staging view of it through {@code device}.
     *
     * @param device the group's device, or null when it has none
     * @throws IllegalStateException when the backend needs a device and the group has none, saying how to give one
     */
    public static Backend forHostMessages(Backend backend, Device device, String op) {
        if (backend.acceptsHostMemory()) {
            return backend;
        }
        if (device == null || device.isCpu()) {
            throw new IllegalStateException(op + " on the " + backend.name() + " backend travels through a device,"
                    + " and this group has none: pass InitOptions.builder().deviceId(Device...) (PyTorch's device_id)"
                    + " or use a backend that takes host memory (tcp)");
        }
        return new HostStagingBackend(backend, device);
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
        return staged(s -> backend.send(s.in(buffer), dst, tag));
    }

    @Override
    public Future<Integer> recv(DeviceBuffer buffer, int src, int tag) {
        return staged(s -> backend.recv(s.out(buffer), src, tag));
    }

    @Override
    public Future<Void> broadcast(DeviceBuffer buffer, int root) {
        return staged(s -> backend.broadcast(s.inOut(buffer), root));
    }

    @Override
    public Future<Void> allReduce(DeviceBuffer buffer, ReduceOp op) {
        return staged(s -> backend.allReduce(s.inOut(buffer), op));
    }

    @Override
    public Future<Void> reduce(DeviceBuffer buffer, int root, ReduceOp op) {
        return staged(s -> backend.reduce(s.inOut(buffer), root, op));
    }

    @Override
    public Future<Void> allGather(List<DeviceBuffer> outputs, DeviceBuffer input) {
        return staged(s -> backend.allGather(s.outs(outputs), s.in(input)));
    }

    @Override
    public Future<Void> gather(List<DeviceBuffer> outputs, DeviceBuffer input, int root) {
        return staged(s -> backend.gather(s.outs(outputs), s.in(input), root));
    }

    @Override
    public Future<Void> scatter(DeviceBuffer output, List<DeviceBuffer> inputs, int root) {
        return staged(s -> backend.scatter(s.out(output), s.ins(inputs), root));
    }

    @Override
    public Future<Void> reduceScatter(DeviceBuffer output, List<DeviceBuffer> inputs, ReduceOp op) {
        return staged(s -> backend.reduceScatter(s.out(output), s.ins(inputs), op));
    }

    @Override
    public Future<Void> allToAll(List<DeviceBuffer> outputs, List<DeviceBuffer> inputs) {
        return staged(s -> backend.allToAll(s.outs(outputs), s.ins(inputs)));
    }

    @Override
    public Future<Void> barrier() {
        return backend.barrier();
    }

    /** The backend beneath is the group's; closing this view closes nothing. */
    @Override
    public Future<Void> close() {
        return Future.succeededFuture();
    }

    /**
     * Runs {@code op} on device copies: the host buffers it reads are uploaded first, the ones it writes
     * downloaded after it, and the copies released either way.
     */
    private <T> Future<T> staged(Function<Staging, Future<T>> op) {
        Staging s = new Staging();
        Future<T> result;
        try {
            Future<T> work = op.apply(s);
            result = s.uploaded().compose(v -> work).compose(r -> s.downloaded().map(v -> r));
        } catch (RuntimeException e) {
            result = Future.failedFuture(e);
        }
        return result.andThen(r -> s.release());
    }

    /** The device copies of one operation's host buffers. */
    private final class Staging {
        private final List<Future<Void>> uploads = new ArrayList<>();
        private final List<DeviceBuffer[]> downloads = new ArrayList<>();
        private final List<DeviceBuffer> copies = new ArrayList<>();

        DeviceBuffer in(DeviceBuffer b) {
            if (!b.isHost()) {
                return b;
            }
            DeviceBuffer d = copyOf(b);
            uploads.add(Future.fromCompletionStage(runtime.copy(b, 0, d, 0, b.byteSize())));
            return d;
        }

        DeviceBuffer out(DeviceBuffer b) {
            if (!b.isHost()) {
                return b;
            }
            DeviceBuffer d = copyOf(b);
            downloads.add(new DeviceBuffer[] {d, b});
            return d;
        }

        DeviceBuffer inOut(DeviceBuffer b) {
            DeviceBuffer d = in(b);
            if (d != b) {
                downloads.add(new DeviceBuffer[] {d, b});
            }
            return d;
        }

        List<DeviceBuffer> ins(List<DeviceBuffer> bs) {
            return bs.stream().map(this::in).toList();
        }

        List<DeviceBuffer> outs(List<DeviceBuffer> bs) {
            return bs.stream().map(this::out).toList();
        }

        private DeviceBuffer copyOf(DeviceBuffer host) {
            DeviceBuffer d = runtime.allocate(device, host.dtype(), host.numel());
            copies.add(d);
            return d;
        }

        Future<Void> uploaded() {
            return Future.all(uploads).mapEmpty();
        }

        Future<Void> downloaded() {
            List<Future<Void>> done = new ArrayList<>();
            for (DeviceBuffer[] pair : downloads) {
                done.add(Future.fromCompletionStage(runtime.copy(pair[0], 0, pair[1], 0, pair[1].byteSize())));
            }
            return Future.all(done).mapEmpty();
        }

        void release() {
            copies.forEach(runtime::release);
        }
    }
}
