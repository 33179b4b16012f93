package io.tensorbus.internal.tensor;

import io.tensorbus.DType;
import io.tensorbus.autograd.AccumulateGrad;
import io.tensorbus.autograd.Node;
import io.tensorbus.spi.DeviceBuffer;
import io.tensorbus.spi.KernelSource;
import io.tensorbus.tensor.Storage;
import io.tensorbus.tensor.Tensor;
import java.util.Objects;

/**
 * What the engine, the kernels outside {@code io.tensorbus.tensor}, DDP and distributed autograd reach on a
 * {@link Tensor} that users do not: PyTorch's {@code AutogradMeta} (wiring a tensor to the node that computes
 * its gradient, the leaf's gradient accumulator) and the {@code TensorImpl}'s storage. {@code Tensor} installs
 * the access when its class initialises, so these stay off its public face.
 */
public final class TensorInternals {
    /** The operations {@code Tensor} grants; installed once, by {@code Tensor} itself. */
    public interface Access {
        /** See {@link TensorInternals#setGradFn}. */
        void setGradFn(Tensor t, Node node, int outputNr);

        /** See {@link TensorInternals#gradAccumulator}. */
        AccumulateGrad gradAccumulator(Tensor t);

        /** See {@link TensorInternals#storage}. */
        Storage storage(Tensor t);

        /** See {@link TensorInternals#uninitialized}. */
        Tensor uninitialized(DType dtype, int... shape);

        /** See {@link TensorInternals#deviceBuffer}. */
        DeviceBuffer deviceBuffer(Tensor t, String what);

        /** See {@link TensorInternals#adoptIntoScope}. */
        void adoptIntoScope(Tensor t);

        /** See {@link TensorInternals#setData}. */
        void setData(Tensor t, Tensor data);

        /** See {@link TensorInternals#launch}. */
        void launch(String op, KernelSource program, String kernel, long items, int groupSize, Object... args);
    }

    private static volatile Access access;

    private TensorInternals() {
    }

    /**
     * Called by {@code Tensor}'s static initialiser.
     *
     * @throws IllegalStateException when an access was installed already
     */
    public static synchronized void install(Access a) {
        if (access != null) {
            throw new IllegalStateException("the tensor access is installed already");
        }
        access = Objects.requireNonNull(a, "access");
    }

    /** Attaches the backward node that produced {@code t} (its output {@code outputNr}); null makes it a leaf. */
    public static void setGradFn(Tensor t, Node node, int outputNr) {
        access().setGradFn(t, node, outputNr);
    }

    /**
     * The node that accumulates into the leaf {@code t}'s {@code .grad}; DDP registers its post-hooks on it.
     *
     * @throws IllegalStateException for a non-leaf or a tensor that does not require grad
     */
    public static AccumulateGrad gradAccumulator(Tensor t) {
        return access().gradAccumulator(t);
    }

    /**
     * A contiguous tensor whose elements are unspecified (reused cache memory, not zeroed): for results a kernel
     * overwrites whole.
     */
    public static Tensor uninitialized(DType dtype, int... shape) {
        return access().uninitialized(dtype, shape);
    }

    /**
     * Hands {@code t}'s storage, allocated on another thread and in no scope, to this thread's innermost open
     * {@code MemoryScope} (if any): a result received for this thread (an RPC's) is then given back when the
     * scope closes, as the tensors this thread allocates are.
     */
    public static void adoptIntoScope(Tensor t) {
        access().adoptIntoScope(t);
    }

    /** The storage {@code t} is a view of, shared with its other views; kernels address it from its offset. */
    public static Storage storage(Tensor t) {
        return access().storage(t);
    }

    /**
     * The device buffer of a dense device tensor, for a backend to read and write in place.
     *
     * @throws IllegalArgumentException for a host tensor
     * @throws UnsupportedOperationException for a strided or partial view of device memory
     */
    public static DeviceBuffer deviceBuffer(Tensor t, String what) {
        return access().deviceBuffer(t, what);
    }

    /**
     * Points {@code t} at {@code data}'s elements in place, as PyTorch's {@code t.data = data}: {@code Module.to}
     * moves parameters and buffers so that the objects layers and optimizers hold follow.
     *
     * @throws IllegalArgumentException for another dtype or shape, or a view
     */
    public static void setData(Tensor t, Tensor data) {
        access().setData(t, data);
    }

    /** Whether {@code t}'s elements live in a device runtime's memory. */
    public static boolean onDevice(Tensor t) {
        return !t.device().isCpu();
    }

    /**
     * Runs device kernel {@code kernel} of {@code program} over {@code items} work items and waits for it, with a
     * deadline: the way kernels outside {@code io.tensorbus.tensor} (convolutions, pooling) reach device memory.
     * Arguments are as {@code DeviceRuntime.launch} takes them, except that a {@link Tensor} stands for its
     * contiguous device memory; the first tensor names the device in errors.
     *
     * @throws IllegalArgumentException for tensors on different devices or on the host
     * @throws UnsupportedOperationException for a strided view (make it contiguous first)
     * @throws IllegalStateException when the device fails the kernel or it outlives the deadline, naming
     *         {@code op} and the device
     */
    public static void launch(String op, KernelSource program, String kernel, long items, int groupSize,
            Object... args) {
        access().launch(op, program, kernel, items, groupSize, args);
    }

    private static Access access() {
        Access a = access;
        if (a == null) {
            try {
                Class.forName(Tensor.class.getName(), true, Tensor.class.getClassLoader());
            } catch (ClassNotFoundException e) {
                throw new IllegalStateException(e);
            }
            a = access;
        }
        return a;
    }
}
