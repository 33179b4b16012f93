package io.tensorbus.tensor;

import io.tensorbus.DType;
import io.tensorbus.Device;
import io.tensorbus.autograd.AccumulateGrad;
import io.tensorbus.autograd.Autograd;
import io.tensorbus.autograd.Node;
import io.tensorbus.autograd.RemovableHandle;
import io.tensorbus.internal.tensor.Access;
import io.tensorbus.internal.tensor.Shapes;
import io.tensorbus.internal.tensor.Strided;
import io.tensorbus.internal.tensor.TensorInternals;
import io.tensorbus.spi.ElementwiseOp;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.function.UnaryOperator;

/**
 * An n-dimensional array with a dtype, a shape, strides and a storage offset over shared off-heap
 * {@link Storage}, and the autograd state of PyTorch's {@code torch.Tensor}.
 *
 * <p>Names follow PyTorch: {@code add} returns a new tensor, {@code addi} changes this one in place.
 * Views ({@code view}, {@code transpose}, {@code narrow}, {@code expand}...) share storage. Ops that record
 * a graph do so when {@link Autograd#isGradEnabled()} and an input {@link #requiresGrad()}. A tensor is not
 * safe for concurrent writes; concurrent reads are fine.
 */
public final class Tensor {
    static {
        TensorInternals.install(new TensorInternals.Access() {
            @Override
            public void setGradFn(Tensor t, Node node, int outputNr) {
                t.setGradFn(node, outputNr);
            }

            @Override
            public AccumulateGrad gradAccumulator(Tensor t) {
                return t.gradAccumulator();
            }

            @Override
            public Tensor uninitialized(DType dtype, int... shape) {
                return Tensor.uninitialized(dtype, shape);
            }

            @Override
            public Storage storage(Tensor t) {
                return t.storage();
            }

            @Override
            public io.tensorbus.spi.DeviceBuffer deviceBuffer(Tensor t, String what) {
                return DeviceOps.buffer(t, what);
            }

            @Override
            public void adoptIntoScope(Tensor t) {
                MemoryScope.track(t.storage());
            }
        });
    }

    private final Storage storage;
    private final DType dtype;
    private final int[] shape;
    private final int[] strides;
    private final long offset;
    private final Tensor base;

    private boolean requiresGrad;
    private Tensor grad;
    private Node gradFn;
    private int outputNr;
    private AccumulateGrad accumulator;
    private boolean retainsGrad;
    private int historyVersion;
    private int viewVersion;
    private boolean viewMadeWithoutGrad;

    Tensor(Storage storage, DType dtype, int[] shape, int[] strides, long offset, Tensor base) {
        this.storage = storage;
        this.dtype = dtype;
        this.shape = shape;
        this.strides = strides;
        this.offset = offset;
        this.base = base;
    }

    // ---------------------------------------------------------------- factories

    /** An uninitialised-looking (in fact zeroed) tensor of a dtype and shape. */
    public static Tensor empty(DType dtype, int... shape) {
        Objects.requireNonNull(dtype, "dtype");
        int[] s = shape.clone();
        int n = Shapes.numel(s);
        return new Tensor(Storage.allocate((long) n * dtype.byteSize()), dtype, s, Shapes.contiguousStrides(s), 0, null);
    }

    /**
     * A tensor whose elements are unspecified (what freed storage of the host cache held): for results an
     * operation overwrites whole, which then skip the zero-fill.
     */
    static Tensor uninitialized(DType dtype, int... shape) {
        int[] s = shape.clone();
        int n = Shapes.numel(s);
        return new Tensor(Storage.allocateUninitialized((long) n * dtype.byteSize()), dtype, s,
                Shapes.contiguousStrides(s), 0, null);
    }

    /** Zeros of dtype float32. */
    public static Tensor zeros(int... shape) {
        return empty(DType.FLOAT32, shape);
    }

    /** Zeros of a dtype. */
    public static Tensor zeros(DType dtype, int... shape) {
        return empty(dtype, shape);
    }

    /** Ones of dtype float32. */
    public static Tensor ones(int... shape) {
        return full(1.0, DType.FLOAT32, shape);
    }

    /** Ones of a dtype. */
    public static Tensor ones(DType dtype, int... shape) {
        return full(1.0, dtype, shape);
    }

    /** A tensor filled with {@code value}. */
    public static Tensor full(double value, DType dtype, int... shape) {
        Tensor t = empty(dtype, shape);
        if (value != 0) {
            t.fillRaw(value);
        }
        return t;
    }

    /** Zeros with the dtype and shape of {@code t}. */
    public static Tensor zerosLike(Tensor t) {
        return empty(t.dtype, t.shape);
    }

    /** Ones with the dtype and shape of {@code t}. */
    public static Tensor onesLike(Tensor t) {
        return full(1.0, t.dtype, t.shape);
    }

    /** A zero-dimensional float32 tensor. */
    public static Tensor scalar(double value) {
        return full(value, DType.FLOAT32);
    }

    /** A zero-dimensional tensor of a dtype. */
    public static Tensor scalar(double value, DType dtype) {
        return full(value, dtype);
    }

    /**
     * A float32 tensor holding a copy of {@code data} in row-major order; with no shape, a 1-d tensor.
     *
     * @throws IllegalArgumentException when the shape does not hold {@code data.length} elements
     */
    public static Tensor of(float[] data, int... shape) {
        Tensor t = empty(DType.FLOAT32, shapeFor(data.length, shape));
        MemorySegment.copy(data, 0, t.storage.segment(), java.lang.foreign.ValueLayout.JAVA_FLOAT, 0, data.length);
        return t;
    }

    /** A float64 tensor holding a copy of {@code data}; see {@link #of(float[], int...)}. */
    public static Tensor of(double[] data, int... shape) {
        Tensor t = empty(DType.FLOAT64, shapeFor(data.length, shape));
        MemorySegment.copy(data, 0, t.storage.segment(), java.lang.foreign.ValueLayout.JAVA_DOUBLE, 0, data.length);
        return t;
    }

    /** An int32 tensor holding a copy of {@code data}; see {@link #of(float[], int...)}. */
    public static Tensor of(int[] data, int... shape) {
        Tensor t = empty(DType.INT32, shapeFor(data.length, shape));
        MemorySegment.copy(data, 0, t.storage.segment(), java.lang.foreign.ValueLayout.JAVA_INT, 0, data.length);
        return t;
    }

    /** An int64 tensor holding a copy of {@code data}; see {@link #of(float[], int...)}. */
    public static Tensor of(long[] data, int... shape) {
        Tensor t = empty(DType.INT64, shapeFor(data.length, shape));
        MemorySegment.copy(data, 0, t.storage.segment(), java.lang.foreign.ValueLayout.JAVA_LONG, 0, data.length);
        return t;
    }

    /** A bool tensor holding a copy of {@code data}; see {@link #of(float[], int...)}. */
    public static Tensor of(boolean[] data, int... shape) {
        Tensor t = empty(DType.BOOL, shapeFor(data.length, shape));
        for (int i = 0; i < data.length; i++) {
            t.storage.segment().set(java.lang.foreign.ValueLayout.JAVA_BYTE, i, (byte) (data[i] ? 1 : 0));
        }
        return t;
    }

    /**
     * A tensor over existing memory in row-major order, without copying (for readers of files and frames).
     *
     * @throws IllegalArgumentException when the segment is smaller than the shape needs
     */
    public static Tensor fromSegment(MemorySegment segment, DType dtype, int... shape) {
        int[] s = shape.clone();
        long need = (long) Shapes.numel(s) * dtype.byteSize();
        if (segment.byteSize() < need) {
            throw new IllegalArgumentException("segment of " + segment.byteSize() + " bytes is too small for "
                    + dtype + " " + Shapes.str(s) + " (" + need + " bytes)");
        }
        return new Tensor(Storage.wrap(segment.asSlice(0, need)), dtype, s, Shapes.contiguousStrides(s), 0, null);
    }

    private static int[] shapeFor(int length, int[] shape) {
        int[] s = shape.length == 0 ? new int[] {length} : shape.clone();
        if (Shapes.numel(s) != length) {
            throw new IllegalArgumentException("shape " + Shapes.str(s) + " holds " + Shapes.numel(s)
                    + " elements but " + length + " values were given");
        }
        return s;
    }

    /** {@code [0, end)} as int64, as {@code torch.arange(end)}. */
    public static Tensor arange(long end) {
        return Factories.arange(0, end, 1, DType.INT64);
    }

    /**
     * {@code start, start+step, ...} below {@code end} (above, for a negative step).
     *
     * @throws IllegalArgumentException for a zero step or one pointing away from {@code end}
     */
    public static Tensor arange(double start, double end, double step, DType dtype) {
        return Factories.arange(start, end, step, dtype);
    }

    /** {@code steps} evenly spaced float32 values from {@code start} to {@code end} inclusive. */
    public static Tensor linspace(double start, double end, int steps) {
        return Factories.linspace(start, end, steps, DType.FLOAT32);
    }

    /** {@code steps} evenly spaced values of a dtype from {@code start} to {@code end} inclusive. */
    public static Tensor linspace(double start, double end, int steps, DType dtype) {
        return Factories.linspace(start, end, steps, dtype);
    }

    /** The n x n float32 identity. */
    public static Tensor eye(int n) {
        return Factories.eye(n, n, DType.FLOAT32);
    }

    /** An n x m matrix of a dtype with ones on the diagonal. */
    public static Tensor eye(int n, int m, DType dtype) {
        return Factories.eye(n, m, dtype);
    }

    /** Uniform {@code [0, 1)} float32 values from the default generator. */
    public static Tensor rand(int... shape) {
        return Factories.rand(Generator.defaultGenerator(), DType.FLOAT32, shape);
    }

    /** Uniform {@code [0, 1)} values of a floating dtype from {@code generator}. */
    public static Tensor rand(Generator generator, DType dtype, int... shape) {
        return Factories.rand(generator, dtype, shape);
    }

    /** Standard normal float32 values from the default generator. */
    public static Tensor randn(int... shape) {
        return Factories.randn(Generator.defaultGenerator(), DType.FLOAT32, shape);
    }

    /** Standard normal values of a floating dtype from {@code generator}. */
    public static Tensor randn(Generator generator, DType dtype, int... shape) {
        return Factories.randn(generator, dtype, shape);
    }

    /**
     * Uniform int64 values in {@code [low, high)}.
     *
     * @throws IllegalArgumentException when {@code low >= high}
     */
    public static Tensor randint(Generator generator, long low, long high, int... shape) {
        return Factories.randint(generator, low, high, shape);
    }

    /**
     * A random permutation of {@code 0..n-1} as int64 ({@code torch.randperm}).
     *
     * @throws IllegalArgumentException when {@code n < 0}
     */
    public static Tensor randperm(Generator generator, int n) {
        return Factories.randperm(generator, n);
    }

    // ---------------------------------------------------------------- metadata

    /** The element type. */
    public DType dtype() {
        return dtype;
    }

    /** Where the storage lives: {@link Device#CPU}, or the device {@link #to(Device)} moved it to. */
    public Device device() {
        return storage.device();
    }

    /**
     * This tensor on {@code target}: itself when it is there already, else a copy (PyTorch's {@code to(device)}).
     * Device tensors support the element-wise arithmetic, fills, copies, casts and whole-tensor sums; other
     * operations on them fail naming the operation and the device.
     *
     * @throws IllegalArgumentException when no device runtime serves {@code target}'s type or the device does not exist
     * @throws IllegalStateException when the runtime is not available on this machine (the cause says why)
     * @throws UnsupportedOperationException when autograd would have to record the move (a tensor that requires grad)
     */
    public Tensor to(Device target) {
        return DeviceOps.to(this, target);
    }

    /** This tensor in host memory: itself, or a copy of a device tensor. */
    public Tensor cpu() {
        return DeviceOps.to(this, Device.CPU);
    }

    /**
     * A zero-filled tensor on {@code device}.
     *
     * @throws IllegalArgumentException when no device runtime serves the device, or a size is negative
     */
    public static Tensor empty(Device device, DType dtype, int... shape) {
        return DeviceOps.empty(device, dtype, shape);
    }

    /** {@link #empty(Device, DType, int...)}: zeros on {@code device}. */
    public static Tensor zeros(Device device, DType dtype, int... shape) {
        return DeviceOps.empty(device, dtype, shape);
    }

    /** Ones on {@code device}. */
    public static Tensor ones(Device device, DType dtype, int... shape) {
        return DeviceOps.full(device, dtype, 1.0, shape);
    }

    /** {@code value} in every element, on {@code device}. */
    public static Tensor full(double value, DType dtype, Device device, int... shape) {
        return DeviceOps.full(device, dtype, value, shape);
    }

    /**
     * A tensor over device memory that other code allocated, without a copy: collectives and device operations
     * read and write it in place, and its owner keeps it (tensorbus never frees it).
     *
     * @param memory the device runtime's handle: a JOCL {@code cl_mem} for {@code opencl:N}
     * @throws IllegalArgumentException when the handle is not memory of that device, or is too small for the shape
     */
    public static Tensor fromDeviceMemory(Device device, Object memory, DType dtype, int... shape) {
        return DeviceOps.wrap(device, memory, dtype, shape);
    }

    /** A copy of the shape. */
    public int[] shape() {
        return shape.clone();
    }

    /**
     * The size of one dimension (negative counts from the end).
     *
     * @throws IllegalArgumentException when {@code dim} is out of range
     */
    public int size(int dim) {
        return shape[Shapes.normalizeDim(dim, shape.length)];
    }

    /** The number of dimensions. */
    public int dim() {
        return shape.length;
    }

    /** The number of elements. */
    public int numel() {
        return Shapes.numel(shape);
    }

    /** A copy of the strides, in elements. */
    public int[] strides() {
        return strides.clone();
    }

    /** Where element 0 sits in the storage, in elements. */
    public long storageOffset() {
        return offset;
    }

    /** The shared storage; outside this package through {@link TensorInternals#storage}. */
    Storage storage() {
        return storage;
    }

    /** True when the elements lie row-major without gaps from {@link #storageOffset()}. */
    public boolean isContiguous() {
        return Shapes.isContiguous(shape, strides);
    }

    /** The tensor this one is a view of, or null. */
    public Tensor base() {
        return base;
    }

    /**
     * The bytes of this tensor's elements when it is contiguous: what the network sends without a copy.
     *
     * @throws IllegalStateException when the tensor is not contiguous (call {@link #contiguous()} first)
     */
    public MemorySegment dataSegment() {
        if (!isContiguous()) {
            throw new IllegalStateException("dataSegment() needs a contiguous tensor; call contiguous() first");
        }
        long es = dtype.byteSize();
        return storage.segment().asSlice(offset * es, (long) numel() * es);
    }

    /** Operand description for kernels in {@code impl}. */
    Strided.View view() {
        return new Strided.View(storage.segment(), dtype, offset, strides);
    }

    // ---------------------------------------------------------------- element access

    /**
     * The value of a one-element tensor.
     *
     * @throws IllegalStateException when the tensor has more or fewer than one element
     */
    public double item() {
        if (DeviceOps.onDevice(this)) {
            return cpu().item();
        }
        if (numel() != 1) {
            throw new IllegalStateException("item() needs a tensor with one element, this one has shape "
                    + Shapes.str(shape) + " (" + numel() + " elements)");
        }
        return Access.getDouble(storage.segment(), dtype, offset);
    }

    /** The value of a one-element integer or bool tensor as a long (exact for int64). */
    public long longItem() {
        if (DeviceOps.onDevice(this)) {
            return cpu().longItem();
        }
        item();
        return Access.getLong(storage.segment(), dtype, offset);
    }

    /**
     * The element at {@code index} (one index per dimension, negative counts from the end).
     *
     * @throws IllegalArgumentException for the wrong number of indices or one out of range
     */
    public double getDouble(int... index) {
        if (DeviceOps.onDevice(this)) {
            return cpu().getDouble(index);
        }
        return Access.getDouble(storage.segment(), dtype, elementOffset(index));
    }

    /** The element at {@code index} as a long; see {@link #getDouble(int...)}. */
    public long getLong(int... index) {
        if (DeviceOps.onDevice(this)) {
            return cpu().getLong(index);
        }
        return Access.getLong(storage.segment(), dtype, elementOffset(index));
    }

    /**
     * Writes one element in place (bumps the version; not recorded by autograd).
     *
     * @throws IllegalArgumentException for a bad index
     */
    public Tensor set(double value, int... index) {
        checkInplace("set");
        Access.setDouble(storage.segment(), dtype, elementOffset(index), value);
        storage.bumpVersion();
        return this;
    }

    private long elementOffset(int[] index) {
        if (index.length != shape.length) {
            throw new IllegalArgumentException("got " + index.length + " indices for a tensor of "
                    + shape.length + " dimensions (shape " + Shapes.str(shape) + ")");
        }
        long o = offset;
        for (int d = 0; d < index.length; d++) {
            int i = index[d] < 0 ? index[d] + shape[d] : index[d];
            if (i < 0 || i >= shape[d]) {
                throw new IllegalArgumentException("index " + index[d] + " is out of bounds for dimension " + d
                        + " with size " + shape[d]);
            }
            o += (long) i * strides[d];
        }
        return o;
    }

    /** The elements in row-major order as floats (converted from any dtype). */
    public float[] toFloatArray() {
        if (DeviceOps.onDevice(this)) {
            return cpu().toFloatArray();
        }
        Tensor c = to(DType.FLOAT32).contiguous();
        return c.dataSegment().toArray(java.lang.foreign.ValueLayout.JAVA_FLOAT);
    }

    /** The elements in row-major order as doubles. */
    public double[] toDoubleArray() {
        if (DeviceOps.onDevice(this)) {
            return cpu().toDoubleArray();
        }
        Tensor c = to(DType.FLOAT64).contiguous();
        return c.dataSegment().toArray(java.lang.foreign.ValueLayout.JAVA_DOUBLE);
    }

    /** The elements in row-major order as longs (floats truncate). */
    public long[] toLongArray() {
        if (DeviceOps.onDevice(this)) {
            return cpu().toLongArray();
        }
        Tensor c = to(DType.INT64).contiguous();
        return c.dataSegment().toArray(java.lang.foreign.ValueLayout.JAVA_LONG);
    }

    /** The elements in row-major order as ints (floats truncate). */
    public int[] toIntArray() {
        if (DeviceOps.onDevice(this)) {
            return cpu().toIntArray();
        }
        Tensor c = to(DType.INT32).contiguous();
        return c.dataSegment().toArray(java.lang.foreign.ValueLayout.JAVA_INT);
    }

    // ---------------------------------------------------------------- autograd state

    /** True when gradients are computed for this tensor. */
    public boolean requiresGrad() {
        return requiresGrad || gradFn() != null;
    }

    /**
     * Marks a leaf as needing gradients ({@code requires_grad_}); returns this.
     *
     * @throws IllegalArgumentException for a non-floating dtype, or to turn it off on a non-leaf
     */
    public Tensor requiresGrad(boolean value) {
        if (value && !dtype.isFloatingPoint()) {
            throw new IllegalArgumentException("only tensors of floating point dtype can require gradients, got " + dtype);
        }
        if (!value && gradFn != null) {
            throw new IllegalArgumentException("requiresGrad(false) is only allowed on leaf tensors; use detach()");
        }
        this.requiresGrad = value;
        return this;
    }

    /** True for tensors created by the user (not the result of a recorded op). */
    public boolean isLeaf() {
        return gradFn() == null;
    }

    /** The accumulated gradient of a leaf, or null before the first backward. */
    public Tensor grad() {
        return grad;
    }

    /**
     * Replaces the accumulated gradient (null clears it).
     *
     * @throws IllegalArgumentException when the gradient's shape differs from this tensor's
     */
    public void setGrad(Tensor grad) {
        if (grad != null && !Arrays.equals(grad.shape, shape)) {
            throw new IllegalArgumentException("assigned grad has shape " + Shapes.str(grad.shape)
                    + " but the tensor has shape " + Shapes.str(shape));
        }
        if (grad != null && grad.dtype != dtype) {
            throw new IllegalArgumentException("assigned grad has dtype " + grad.dtype + " but the tensor has dtype "
                    + dtype);
        }
        if (grad != null) {
            MemoryScope.detach(grad); // a gradient outlives the step that computed it
        }
        this.grad = grad;
    }

    /** The node that computes this tensor's gradient inputs, or null for a leaf. */
    public Node gradFn() {
        if (base != null && viewVersion != base.historyVersion) {
            // The base was changed in place after this view was taken: its history now starts there.
            ViewHistory.regenerate(this);
            viewVersion = base.historyVersion;
        }
        return gradFn;
    }

    /** Which output of {@link #gradFn()} this tensor is. */
    public int outputNr() {
        return outputNr;
    }

    /**
     * Attaches the backward node that produced this tensor; used by {@link Autograd#record}, and by
     * distributed autograd for its receive nodes, through {@link TensorInternals#setGradFn}.
     */
    void setGradFn(Node node, int outputNr) {
        this.gradFn = node;
        this.outputNr = outputNr;
    }

    /**
     * The node that accumulates into this leaf's {@code .grad}; DDP registers its post-hooks on it, through
     * {@link TensorInternals#gradAccumulator}.
     *
     * @throws IllegalStateException for a non-leaf or a tensor that does not require grad
     */
    synchronized AccumulateGrad gradAccumulator() {
        if (gradFn != null || !requiresGrad) {
            throw new IllegalStateException("only leaf tensors that require grad have a gradient accumulator");
        }
        if (accumulator == null) {
            accumulator = new AccumulateGrad(this);
        }
        return accumulator;
    }

    /**
     * Registers a hook called with this tensor's gradient whenever it is computed; a non-null return
     * replaces the gradient.
     *
     * @throws IllegalStateException when the tensor does not require grad
     */
    public RemovableHandle registerHook(UnaryOperator<Tensor> hook) {
        if (!requiresGrad()) {
            throw new IllegalStateException("cannot register a hook on a tensor that doesn't require gradient");
        }
        return gradFn != null ? gradFn.registerTensorPreHook(outputNr, hook)
                : gradAccumulator().registerTensorPreHook(0, hook);
    }

    /** Keeps the gradient of a non-leaf tensor in {@link #grad()} after backward ({@code retain_grad}). */
    public Tensor retainGrad() {
        if (gradFn != null && !retainsGrad) {
            retainsGrad = true;
            registerHook(g -> {
                grad = grad == null ? g.clone() : grad.add(g);
                MemoryScope.detach(grad);
                return g;
            });
        }
        return this;
    }

    /** Backward from a one-element tensor ({@code loss.backward()}). */
    public void backward() {
        Autograd.backward(List.of(this), null, false);
    }

    /** Backward with an explicit gradient of this tensor. */
    public void backward(Tensor gradient) {
        backward(gradient, false);
    }

    /** Backward with an explicit gradient (null for a scalar), keeping the graph when {@code retainGraph}. */
    public void backward(Tensor gradient, boolean retainGraph) {
        Autograd.backward(List.of(this), java.util.Collections.singletonList(gradient), retainGraph);
    }

    /** A tensor sharing storage with this one but cut from the graph. */
    public Tensor detach() {
        return new Tensor(storage, dtype, shape, strides, offset, null);
    }

    /** Marks this tensor as cut from the graph in place; returns this. */
    public Tensor detachi() {
        gradFn = null;
        requiresGrad = false;
        return this;
    }

    /**
     * Called by every in-place op: refuses to change a leaf that requires grad (while recording) or a view
     * of a tensor in the graph, where the gradient would silently be wrong.
     */
    void checkInplace(String op) {
        if (!Autograd.isGradEnabled()) {
            return;
        }
        if (requiresGrad && gradFn == null) {
            throw new IllegalStateException("a leaf tensor that requires grad is being used in an in-place"
                    + " operation (" + op + "); do it inside Autograd.noGrad() or on a clone()");
        }
        if (base != null && base.requiresGrad && base.gradFn == null) {
            throw new IllegalStateException("a view of a leaf tensor that requires grad is being used in an in-place"
                    + " operation (" + op + "); do it inside Autograd.noGrad() or on a clone()");
        }
        if (base != null && viewMadeWithoutGrad && base.requiresGrad()) {
            // Its history was never recorded, so the write could not be either (PyTorch refuses it too).
            throw new IllegalStateException("a view made in noGrad mode (or by split/chunk) is being modified in"
                    + " place (" + op + ") with grad mode enabled; take the view with grad enabled, or clone() it");
        }
    }

    /** Counts recorded in-place writes into this base tensor, so its views know their history is stale. */
    int historyVersion() {
        return historyVersion;
    }

    /** Records that a recorded in-place op rewrote this (base) tensor's history. */
    void bumpHistory() {
        historyVersion++;
    }

    /** Marks a new view's history as current with respect to its base, and notes the grad mode it was made in. */
    void syncView() {
        if (base != null) {
            viewVersion = base.historyVersion;
            viewMadeWithoutGrad = !Autograd.isGradEnabled();
        }
    }

    void fillRaw(double v) {
        Ops.fill(this, v);
    }

    // ---------------------------------------------------------------- conversions and views

    /** A contiguous copy when needed, else this tensor. */
    public Tensor contiguous() {
        if (DeviceOps.onDevice(this) && isContiguous()) {
            return this;
        }
        return isContiguous() ? this : ViewOps.clone(this);
    }

    /** A contiguous copy with its own storage, recorded by autograd. */
    public Tensor clone() {
        if (DeviceOps.onDevice(this)) {
            return DeviceOps.clone(this);
        }
        return ViewOps.clone(this);
    }

    /** This tensor converted to {@code target} (this tensor when it already has that dtype). */
    public Tensor to(DType target) {
        if (DeviceOps.onDevice(this)) {
            return DeviceOps.cast(this, Objects.requireNonNull(target, "dtype"));
        }
        return ViewOps.to(this, target);
    }

    /**
     * A view with a new shape over the same elements; one size may be -1.
     *
     * @throws IllegalArgumentException when the element counts differ or the strides do not allow a view
     */
    public Tensor view(int... newShape) {
        return ViewOps.view(this, newShape);
    }

    /** As {@link #view} when the layout allows, else a copy. */
    public Tensor reshape(int... newShape) {
        return ViewOps.reshape(this, newShape);
    }

    /** Swaps two dimensions (a view). */
    public Tensor transpose(int dim0, int dim1) {
        return ViewOps.transpose(this, dim0, dim1);
    }

    /**
     * The transpose of a matrix (a view).
     *
     * @throws IllegalArgumentException for more than 2 dimensions
     */
    public Tensor t() {
        if (shape.length > 2) {
            throw new IllegalArgumentException("t() expects a tensor with <= 2 dimensions, got shape " + Shapes.str(shape));
        }
        return shape.length < 2 ? this : transpose(0, 1);
    }

    /** Reorders the dimensions (a view). */
    public Tensor permute(int... dims) {
        return ViewOps.permute(this, dims);
    }

    /** Elements {@code [start, start+length)} of one dimension (a view). */
    public Tensor narrow(int dim, int start, int length) {
        return ViewOps.narrow(this, dim, start, length);
    }

    /** Python's {@code t[..., start:end:step, ...]} along one dimension (a view); end is clamped. */
    public Tensor slice(int dim, int start, int end, int step) {
        return ViewOps.slice(this, dim, start, end, step);
    }

    /** Index {@code index} of one dimension, which is removed (a view). */
    public Tensor select(int dim, int index) {
        return ViewOps.select(this, dim, index);
    }

    /** {@code select(0, index)}. */
    public Tensor get(int index) {
        return select(0, index);
    }

    /** Splits into pieces of {@code splitSize} along {@code dim} (the last may be smaller); views. */
    public List<Tensor> split(int splitSize, int dim) {
        return ViewOps.split(this, splitSize, dim);
    }

    /** Splits into pieces of the given sizes along {@code dim}; views. */
    public List<Tensor> split(int[] sizes, int dim) {
        return ViewOps.splitSizes(this, sizes, dim);
    }

    /** Splits into {@code chunks} nearly equal pieces along {@code dim}; views. */
    public List<Tensor> chunk(int chunks, int dim) {
        return ViewOps.chunk(this, chunks, dim);
    }

    /** Broadcasts to a larger shape without copying; -1 keeps a size. */
    public Tensor expand(int... newShape) {
        return ViewOps.expand(this, newShape);
    }

    /** Removes every dimension of size 1. */
    public Tensor squeeze() {
        return ViewOps.squeeze(this, null);
    }

    /** Removes dimension {@code dim} if its size is 1. */
    public Tensor squeeze(int dim) {
        return ViewOps.squeeze(this, dim);
    }

    /** Inserts a dimension of size 1 at {@code dim}. */
    public Tensor unsqueeze(int dim) {
        return ViewOps.unsqueeze(this, dim);
    }

    /** Flattens to one dimension. */
    public Tensor flatten() {
        return flatten(0, -1);
    }

    /** Flattens dimensions {@code startDim..endDim} into one. */
    public Tensor flatten(int startDim, int endDim) {
        return ViewOps.flatten(this, startDim, endDim);
    }

    /** Concatenates along an existing dimension. */
    public static Tensor cat(List<Tensor> tensors, int dim) {
        return ViewOps.cat(tensors, dim);
    }

    /** Stacks along a new dimension. */
    public static Tensor stack(List<Tensor> tensors, int dim) {
        return ViewOps.stack(tensors, dim);
    }

    /** Reduces a broadcast gradient back to {@code target} by summing the broadcast dimensions. */
    public Tensor sumToShape(int... target) {
        return ReduceOps.sumToShape(this, target);
    }

    // ---------------------------------------------------------------- arithmetic

    /** {@code this + other} with broadcasting. */
    public Tensor add(Tensor other) {
        if (DeviceOps.onDevice(this) || DeviceOps.onDevice(other)) {
            return DeviceOps.binary(ElementwiseOp.ADD, this, other, "add");
        }
        return Ops.add(this, other, 1.0);
    }

    /** {@code this + alpha * other} with broadcasting ({@code torch.add(..., alpha=)}). */
    public Tensor add(Tensor other, double alpha) {
        if (DeviceOps.onDevice(this) || DeviceOps.onDevice(other)) {
            return DeviceOps.addScaled(this, other, alpha, "add");
        }
        return Ops.add(this, other, alpha);
    }

    /** {@code this + value}. */
    public Tensor add(double value) {
        if (DeviceOps.onDevice(this)) {
            return DeviceOps.scalar(ElementwiseOp.ADD, this, value, "add");
        }
        return Ops.addScalar(this, value);
    }

    /** {@code this - other} with broadcasting. */
    public Tensor sub(Tensor other) {
        if (DeviceOps.onDevice(this) || DeviceOps.onDevice(other)) {
            return DeviceOps.binary(ElementwiseOp.SUB, this, other, "sub");
        }
        return Ops.add(this, other, -1.0);
    }

    /** {@code this - value}. */
    public Tensor sub(double value) {
        if (DeviceOps.onDevice(this)) {
            return DeviceOps.scalar(ElementwiseOp.SUB, this, value, "sub");
        }
        return Ops.addScalar(this, -value);
    }

    /** {@code this * other} with broadcasting. */
    public Tensor mul(Tensor other) {
        if (DeviceOps.onDevice(this) || DeviceOps.onDevice(other)) {
            return DeviceOps.binary(ElementwiseOp.MUL, this, other, "mul");
        }
        return Ops.mul(this, other);
    }

    /** {@code this * value}. */
    public Tensor mul(double value) {
        if (DeviceOps.onDevice(this)) {
            return DeviceOps.scalar(ElementwiseOp.MUL, this, value, "mul");
        }
        return Ops.mulScalar(this, value);
    }

    /** {@code this / other} with broadcasting (true division: integers give float32). */
    public Tensor div(Tensor other) {
        if (DeviceOps.onDevice(this) || DeviceOps.onDevice(other)) {
            return DeviceOps.binary(ElementwiseOp.DIV, this, other, "div");
        }
        return Ops.div(this, other);
    }

    /** {@code this / value}. */
    public Tensor div(double value) {
        if (DeviceOps.onDevice(this)) {
            return DeviceOps.scalar(ElementwiseOp.DIV, this, value, "div");
        }
        return Ops.divScalar(this, value);
    }

    /** {@code -this}. */
    public Tensor neg() {
        if (DeviceOps.onDevice(this)) {
            return DeviceOps.scalar(ElementwiseOp.MUL, this, -1.0, "neg");
        }
        return Ops.mulScalar(this, -1.0);
    }

    /** {@code e^this}. */
    public Tensor exp() {
        return Ops.exp(this);
    }

    /** Natural logarithm. */
    public Tensor log() {
        return Ops.log(this);
    }

    /** {@code this ^ exponent}. */
    public Tensor pow(double exponent) {
        return Ops.powScalar(this, exponent);
    }

    /** {@code this ^ exponent} elementwise, with broadcasting. */
    public Tensor pow(Tensor exponent) {
        return Ops.pow(this, exponent);
    }

    /** Square root. */
    public Tensor sqrt() {
        return Ops.sqrt(this);
    }

    /** Absolute value. */
    public Tensor abs() {
        return Ops.abs(this);
    }

    /** Clamps into {@code [min, max]}; pass infinities for a one-sided clamp. */
    public Tensor clamp(double min, double max) {
        return Ops.clamp(this, min, max);
    }

    /** {@code max(this, 0)}. */
    public Tensor relu() {
        return Ops.relu(this);
    }

    /** The logistic function. */
    public Tensor sigmoid() {
        return Ops.sigmoid(this);
    }

    /** Hyperbolic tangent. */
    public Tensor tanh() {
        return Ops.tanh(this);
    }

    /** Elementwise {@code this == other} as bool (not differentiable). */
    public Tensor eq(Tensor other) {
        return Ops.compare(this, other, "eq");
    }

    /** Elementwise {@code this > other} as bool. */
    public Tensor gt(Tensor other) {
        return Ops.compare(this, other, "gt");
    }

    /** Elementwise {@code this < other} as bool. */
    public Tensor lt(Tensor other) {
        return Ops.compare(this, other, "lt");
    }

    /** Elementwise {@code this > value} as bool. */
    public Tensor gt(double value) {
        return Ops.compare(this, scalar(value, dtype.isFloatingPoint() ? dtype : DType.FLOAT64), "gt");
    }

    /** Elementwise {@code this < value} as bool. */
    public Tensor lt(double value) {
        return Ops.compare(this, scalar(value, dtype.isFloatingPoint() ? dtype : DType.FLOAT64), "lt");
    }

    // ---------------------------------------------------------------- in place

    /** {@code this += other} in place (broadcasting {@code other}); returns this. */
    public Tensor addi(Tensor other) {
        if (DeviceOps.onDevice(this) || DeviceOps.onDevice(other)) {
            return DeviceOps.inplace(ElementwiseOp.ADD, this, other, "addi");
        }
        return Ops.inplace(this, other, 1.0, "add");
    }

    /** {@code this += alpha * other} in place; returns this. */
    public Tensor addi(Tensor other, double alpha) {
        if (DeviceOps.onDevice(this) || DeviceOps.onDevice(other)) {
            return alpha == 1.0 ? DeviceOps.inplace(ElementwiseOp.ADD, this, other, "addi")
                    : copyi(DeviceOps.addScaled(this, other, alpha, "addi"));
        }
        return Ops.inplace(this, other, alpha, "add");
    }

    /** {@code this += value} in place. */
    public Tensor addi(double value) {
        if (DeviceOps.onDevice(this)) {
            return DeviceOps.inplace(ElementwiseOp.ADD, this, value, "addi");
        }
        return Ops.inplaceScalar(this, value, "add");
    }

    /** {@code this -= other} in place. */
    public Tensor subi(Tensor other) {
        if (DeviceOps.onDevice(this) || DeviceOps.onDevice(other)) {
            return DeviceOps.inplace(ElementwiseOp.SUB, this, other, "subi");
        }
        return Ops.inplace(this, other, -1.0, "add");
    }

    /** {@code this -= value} in place. */
    public Tensor subi(double value) {
        if (DeviceOps.onDevice(this)) {
            return DeviceOps.inplace(ElementwiseOp.SUB, this, value, "subi");
        }
        return Ops.inplaceScalar(this, -value, "add");
    }

    /** {@code this *= other} in place. */
    public Tensor muli(Tensor other) {
        if (DeviceOps.onDevice(this) || DeviceOps.onDevice(other)) {
            return DeviceOps.inplace(ElementwiseOp.MUL, this, other, "muli");
        }
        return Ops.inplace(this, other, 1.0, "mul");
    }

    /** {@code this *= value} in place. */
    public Tensor muli(double value) {
        if (DeviceOps.onDevice(this)) {
            return DeviceOps.inplace(ElementwiseOp.MUL, this, value, "muli");
        }
        return Ops.inplaceScalar(this, value, "mul");
    }

    /** {@code this /= other} in place. */
    public Tensor divi(Tensor other) {
        if (DeviceOps.onDevice(this) || DeviceOps.onDevice(other)) {
            return DeviceOps.inplace(ElementwiseOp.DIV, this, other, "divi");
        }
        return Ops.inplace(this, other, 1.0, "div");
    }

    /** {@code this /= value} in place. */
    public Tensor divi(double value) {
        if (DeviceOps.onDevice(this)) {
            return DeviceOps.inplace(ElementwiseOp.DIV, this, value, "divi");
        }
        return Ops.inplaceScalar(this, value, "div");
    }

    /** Sets every element to zero in place. */
    public Tensor zeroi() {
        return filli(0.0);
    }

    /** Sets every element to {@code value} in place. */
    public Tensor filli(double value) {
        if (DeviceOps.onDevice(this)) {
            return DeviceOps.fill(this, value);
        }
        return Ops.filli(this, value);
    }

    /**
     * Copies {@code src} (broadcast to this shape, converted to this dtype) into this tensor in place.
     *
     * @throws IllegalArgumentException when {@code src} cannot be broadcast to this shape
     */
    public Tensor copyi(Tensor src) {
        if (DeviceOps.onDevice(this)) {
            return DeviceOps.copyInto(this, src);
        }
        if (DeviceOps.onDevice(src)) {
            return copyi(src.cpu());
        }
        return Ops.copyi(this, src);
    }

    // ---------------------------------------------------------------- reductions

    /** Sum of all elements. */
    public Tensor sum() {
        if (DeviceOps.onDevice(this)) {
            return DeviceOps.sum(this);
        }
        return ReduceOps.sum(this, null, false);
    }

    /** Sum over {@code dims}. */
    public Tensor sum(int[] dims, boolean keepDim) {
        return ReduceOps.sum(this, dims, keepDim);
    }

    /** Sum over one dimension. */
    public Tensor sum(int dim, boolean keepDim) {
        return ReduceOps.sum(this, new int[] {dim}, keepDim);
    }

    /** Mean of all elements. */
    public Tensor mean() {
        if (DeviceOps.onDevice(this)) {
            return DeviceOps.mean(this);
        }
        return ReduceOps.mean(this, null, false);
    }

    /** Mean over {@code dims}. */
    public Tensor mean(int[] dims, boolean keepDim) {
        return ReduceOps.mean(this, dims, keepDim);
    }

    /** Mean over one dimension. */
    public Tensor mean(int dim, boolean keepDim) {
        return ReduceOps.mean(this, new int[] {dim}, keepDim);
    }

    /** The largest element. */
    public Tensor max() {
        return ReduceOps.maxAll(this, true);
    }

    /** The largest element along {@code dim} (values; see {@link #argmax} for indices). */
    public Tensor max(int dim, boolean keepDim) {
        return ReduceOps.maxDim(this, dim, keepDim, true)[0];
    }

    /** The smallest element. */
    public Tensor min() {
        return ReduceOps.maxAll(this, false);
    }

    /** The smallest element along {@code dim}. */
    public Tensor min(int dim, boolean keepDim) {
        return ReduceOps.maxDim(this, dim, keepDim, false)[0];
    }

    /** The index (int64) of the largest element along {@code dim}; the first one on ties. */
    public Tensor argmax(int dim, boolean keepDim) {
        return ReduceOps.maxDim(this, dim, keepDim, true)[1];
    }

    /** The flat index of the largest element. */
    public Tensor argmax() {
        return ReduceOps.maxDim(this.reshape(-1), 0, false, true)[1];
    }

    /** The index (int64) of the smallest element along {@code dim}. */
    public Tensor argmin(int dim, boolean keepDim) {
        return ReduceOps.maxDim(this, dim, keepDim, false)[1];
    }

    /** Softmax along {@code dim}. */
    public Tensor softmax(int dim) {
        return ReduceOps.softmax(this, dim);
    }

    /** Log-softmax along {@code dim}, computed stably. */
    public Tensor logSoftmax(int dim) {
        return ReduceOps.logSoftmax(this, dim);
    }

    // ---------------------------------------------------------------- linear algebra and indexing

    /** Matrix product with NumPy's rules for 1-d and batched operands ({@code torch.matmul}). */
    public Tensor matmul(Tensor other) {
        return LinalgOps.matmul(this, other);
    }

    /** Product of two matrices. */
    public Tensor mm(Tensor other) {
        return LinalgOps.mm(this, other);
    }

    /** Batched product of {@code [b, n, k]} and {@code [b, k, m]}. */
    public Tensor bmm(Tensor other) {
        return LinalgOps.bmm(this, other);
    }

    /** The rows (entries along {@code dim}) listed in an int64 {@code index} ({@code index_select}). */
    public Tensor indexSelect(int dim, Tensor index) {
        return IndexOps.indexSelect(this, dim, index);
    }

    /** {@code torch.gather}: {@code out[i][j] = this[i][index[i][j]]} for {@code dim = 1}. */
    public Tensor gather(int dim, Tensor index) {
        return IndexOps.gather(this, dim, index);
    }

    /** {@code torch.scatter}: a copy with {@code src} written at {@code index} along {@code dim}. */
    public Tensor scatter(int dim, Tensor index, Tensor src) {
        return IndexOps.scatter(this, dim, index, src);
    }

    /** {@code torch.scatter} with one value written at every {@code index}. */
    public Tensor scatter(int dim, Tensor index, double value) {
        return IndexOps.scatterValue(this, dim, index, value);
    }

    /** One-hot encoding of an int64 tensor of class indices, as int64 ({@code F.one_hot}). */
    public static Tensor oneHot(Tensor indices, int numClasses) {
        return IndexOps.oneHot(indices, numClasses);
    }

    // ---------------------------------------------------------------- printing

    /** Prints like PyTorch: values (summarised past 1000 elements), shape, dtype and {@code grad_fn}. */
    @Override
    public String toString() {
        if (DeviceOps.onDevice(this)) {
            String host = cpu().toString();
            return host.endsWith(")") ? host.substring(0, host.length() - 1) + ", device='" + device() + "')"
                    : host + " on " + device();
        }
        return Printer.print(this);
    }
}
