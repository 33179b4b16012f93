package io.tensorbus.tensor;

import static io.tensorbus.tensor.DeviceRuntimeKernels.await;
import static io.tensorbus.tensor.DeviceRuntimeKernels.buffer;
import static io.tensorbus.tensor.DeviceRuntimeKernels.longs;
import static io.tensorbus.tensor.DeviceRuntimeKernels.runtime;

import io.tensorbus.DType;
import io.tensorbus.Device;
import io.tensorbus.autograd.Autograd;
import io.tensorbus.internal.tensor.Shapes;
import io.tensorbus.spi.DeviceBuffer;
import io.tensorbus.spi.DeviceRuntime;
import io.tensorbus.spi.DeviceRuntimeProvider;
import java.util.Objects;

/**
 * Where tensors live: allocating them on a device, wrapping memory a device runtime's user allocated, and moving
 * them between the host and devices ({@code to(Device)}).
 */
final class Placement {
    private Placement() {
    }

    static Tensor empty(Device device, DType dtype, int[] shape) {
        Objects.requireNonNull(device, "device");
        Objects.requireNonNull(dtype, "dtype");
        int[] s = shape.clone();
        Shapes.numel(s); // refuses a negative size
        if (device.isCpu()) {
            return Tensor.empty(dtype, s);
        }
        return CachingDeviceAllocator.get().allocate(device, dtype, s);
    }

    static Tensor full(Device device, DType dtype, double value, int[] shape) {
        Tensor t = empty(device, dtype, shape);
        if (value == 0) {
            return t; // empty storage is zero-filled, on the host and on devices
        }
        return t.filli(value);
    }

    static Tensor wrap(Device device, Object memory, DType dtype, int[] shape) {
        Objects.requireNonNull(device, "device");
        if (device.isCpu()) {
            throw new IllegalArgumentException("fromDeviceMemory wraps device memory; for host memory use fromSegment");
        }
        int[] s = shape.clone();
        DeviceRuntime runtime = DeviceRuntimeProvider.of(device);
        DeviceBuffer buffer = runtime.wrap(device, memory, dtype, longs(s));
        return new Tensor(Storage.onDevice(buffer, runtime, false), dtype, s, Shapes.contiguousStrides(s), 0, null);
    }

    /** {@code t} on {@code target}: itself when it lives there, else a copy, recorded for autograd. */
    static Tensor to(Tensor t, Device target) {
        Objects.requireNonNull(target, "device");
        if (t.device().equals(target)) {
            return t;
        }
        Device source = t.device();
        Tensor out;
        try (var ignored = Autograd.noGrad()) {
            out = move(t, target);
        }
        return Autograd.record("ToCopyBackward0", out, g -> new Tensor[] {to(g[0], source)}, t);
    }

    private static Tensor move(Tensor t, Device target) {
        if (t.device().isCpu()) {
            Tensor src = t.contiguous();
            Tensor out = empty(target, t.dtype(), t.shape());
            DeviceBuffer host = DeviceBuffer.host(src.dataSegment(), t.dtype(), src.numel());
            await(runtime(out).copy(host, 0, buffer(out, "to"), 0, host.byteSize()), "to(" + target + ")", out);
            return out;
        }
        if (!target.isCpu()) {
            return move(move(t, Device.CPU), target);
        }
        Tensor src = DeviceOps.contiguous(t);
        Tensor out = Tensor.empty(t.dtype(), t.shape());
        DeviceBuffer host = DeviceBuffer.host(out.dataSegment(), t.dtype(), out.numel());
        await(runtime(src).copy(buffer(src, "cpu"), 0, host, 0, host.byteSize()), "cpu()", t);
        return out;
    }
}
