package io.tensorbus.tensor;

import io.tensorbus.Device;
import java.util.List;
import java.util.Objects;

/**
 * The one place that maps an operation's operands to a {@link Kernels} table: the host's when every operand
 * lives in host memory, else the device runtimes' (which also refuses operands on different devices). As ATen's
 * dispatcher, it is where a new kind of memory plugs in.
 */
final class Dispatch {
    private Dispatch() {
    }

    /** The table for an operation on {@code a}. */
    static Kernels of(Tensor a) {
        return onHost(a) ? HostKernels.INSTANCE : DeviceRuntimeKernels.INSTANCE;
    }

    /** The table for an operation on {@code a} and {@code b}. */
    static Kernels of(Tensor a, Tensor b) {
        return onHost(a) && onHost(Objects.requireNonNull(b, "operand"))
                ? HostKernels.INSTANCE : DeviceRuntimeKernels.INSTANCE;
    }

    /** The table for an operation on all of {@code tensors}. */
    static Kernels of(List<Tensor> tensors) {
        for (Tensor t : tensors) {
            if (t != null && !onHost(t)) {
                return DeviceRuntimeKernels.INSTANCE;
            }
        }
        return HostKernels.INSTANCE;
    }

    private static boolean onHost(Tensor t) {
        return t.storage().deviceBuffer() == null;
    }

    /**
     * The refusal of an operation that the table of its operands lacks, naming the operation, the device, what
     * devices do support and the way out.
     */
    static UnsupportedOperationException missing(String op, Tensor... operands) {
        for (Tensor t : operands) {
            if (t != null && !t.device().isCpu()) {
                return new UnsupportedOperationException("Tensor." + op + " is not supported for tensors on "
                        + t.device() + ": " + DeviceRuntimeKernels.SUPPORTED
                        + "; move the tensor to the host with cpu() first");
            }
        }
        return new UnsupportedOperationException("Tensor." + op + " has no host kernel");
    }

    /**
     * The refusal of host code (a layer's kernel, a codec) that asked for the host memory of a tensor on
     * {@code device}, outside the dispatched operations.
     */
    static UnsupportedOperationException hostMemoryOf(Device device) {
        return new UnsupportedOperationException("an operation that runs on the host only met a tensor on " + device
                + ": " + DeviceRuntimeKernels.SUPPORTED + "; move the tensor to the host with cpu() first");
    }
}
