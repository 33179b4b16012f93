package io.tensorbus.distributed.impl;

import io.tensorbus.DType;
import io.tensorbus.internal.tensor.TensorInternals;
import io.tensorbus.spi.DeviceBuffer;
import io.tensorbus.spi.DeviceRuntimeProvider;
import io.tensorbus.tensor.Tensor;
import io.vertx.core.Future;
import java.lang.ref.Reference;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Turns the tensors of a communication call into the {@link DeviceBuffer}s a backend reads and writes,
 * checking what c10d checks: present, contiguous (dense, for device tensors), and agreeing in dtype and size
 * where the collective needs it. Device tensors hand over their device memory: the backend moves it (the tcp
 * backend stages it through the host, as gloo does with CUDA tensors; device backends keep it on the device).
 */
public final class TensorBuffers {
    private TensorBuffers() {
    }

    /** The buffer of one tensor argument named {@code what} in messages. */
    public static DeviceBuffer of(Tensor t, String what) {
        if (t == null) {
            throw new NullPointerException(what + " must not be null");
        }
        if (!t.device().isCpu()) {
            return TensorInternals.deviceBuffer(t, what);
        }
        if (!t.isContiguous()) {
            throw new IllegalArgumentException(what + " must be contiguous (shape " + Arrays.toString(t.shape())
                    + " is a strided view): call contiguous() first");
        }
        long[] shape = Arrays.stream(t.shape()).asLongStream().toArray();
        return DeviceBuffer.host(t.dataSegment(), t.dtype(), shape);
    }

    /**
     * The {@code shape} elements of {@code dtype} from byte {@code offset} of {@code buffer}: a slice of host memory,
     * or a view of device memory through its runtime.
     */
    public static DeviceBuffer block(DeviceBuffer buffer, long offset, DType dtype, long[] shape) {
        long bytes = dtype.byteSize();
        for (long d : shape) {
            bytes *= d;
        }
        if (buffer.isHost()) {
            return DeviceBuffer.host(buffer.segment().asSlice(offset, bytes), dtype, shape);
        }
        return DeviceRuntimeProvider.of(buffer.device()).view(buffer, offset, dtype, shape);
    }

    /** The buffers of a list of {@code size} tensors that each match {@code dtype} and {@code numel}. */
    public static List<DeviceBuffer> list(List<Tensor> tensors, int size, DType dtype, long numel, String what) {
        if (tensors == null) {
            throw new NullPointerException(what + " must not be null");
        }
        if (tensors.size() != size) {
            throw new IllegalArgumentException(what + " holds " + tensors.size() + " tensors; it needs one per rank ("
                    + size + ")");
        }
        List<DeviceBuffer> out = new ArrayList<>(size);
        for (int i = 0; i < size; i++) {
            DeviceBuffer b = of(tensors.get(i), what + "[" + i + "]");
            if (dtype != null && (b.dtype() != dtype || b.numel() != numel)) {
                throw new IllegalArgumentException(what + "[" + i + "] is " + b + " but must match " + dtype + " with "
                        + numel + " elements");
            }
            out.add(b);
        }
        return out;
    }

    /**
     * No buffers, checking that a non-root rank ({@code rank}) passed no {@code what}: only {@code root} passes them.
     *
     * @throws IllegalArgumentException when {@code tensors} is not empty
     */
    public static List<DeviceBuffer> none(List<Tensor> tensors, String what, String root, int rank) {
        if (tensors != null && !tensors.isEmpty()) {
            throw new IllegalArgumentException(what + " must be empty on rank " + rank + ": only " + root
                    + " passes them");
        }
        return List.of();
    }

    /** Marks tensors written by a collective as modified (autograd's version counter). */
    public static void written(Tensor... tensors) {
        for (Tensor t : tensors) {
            TensorInternals.storage(t).bumpVersion();
        }
    }

    /** {@link #written(Tensor...)} for a list. */
    public static void written(List<Tensor> tensors) {
        tensors.forEach(t -> TensorInternals.storage(t).bumpVersion());
    }

    /**
     * Keeps {@code inputs} reachable until {@code f} completes. A backend holds only the tensors' buffers, and a
     * device tensor's memory is released when the tensor becomes unreachable: an input the caller built inline
     * ({@code allGather(outs, Tensor.full(...))}) could otherwise be freed while the backend still sends it.
     */
    public static <T> Future<T> readUntilDone(Future<T> f, Object inputs) {
        return f.andThen(ar -> Reference.reachabilityFence(inputs));
    }

    /** {@code f}, marking {@code t} written once it succeeds. */
    public static Future<Void> writtenWhenDone(Future<Void> f, Tensor t) {
        return f.map(v -> {
            written(t);
            return null;
        });
    }

    /** {@code f}, marking {@code ts} written once it succeeds. */
    public static Future<Void> writtenWhenDone(Future<Void> f, List<Tensor> ts) {
        return f.map(v -> {
            written(ts);
            return null;
        });
    }
}
