package io.tensorbus.tensor;

import io.tensorbus.DType;
import io.tensorbus.Device;
import io.tensorbus.autograd.Autograd;
import io.tensorbus.internal.tensor.Shapes;
import io.tensorbus.internal.tensor.TensorInternals;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;
import java.util.Objects;

/**
 * An n-dimensional array with a dtype, a shape, strides and a storage offset over shared off-heap
 * {@link Storage}, and the autograd state of PyTorch's {@code torch.Tensor}. Those, and element access, are
 * declared in {@link TensorBase}; this class adds the factories and the operations.
 *
 * <p>Names follow PyTorch: {@code add} returns a new tensor, {@code addi} changes this one in place.
 * Views ({@code view}, {@code transpose}, {@code narrow}, {@code expand}...) share storage. Ops that record
 * a graph do so when {@link Autograd#isGradEnabled()} and an input {@link #requiresGrad()}. A tensor is not
 * safe for concurrent writes; concurrent reads are fine.
 */
public final class Tensor extends TensorBase {
    static {
        TensorInternals.install(new TensorAccess());
    }

    Tensor(Storage storage, DType dtype, int[] shape, int[] strides, long offset, Tensor base) {
        super(storage, dtype, shape, strides, offset, base);
    }

    // ---------------------------------------------------------------- factories

    /** An uninitialised-looking (in fact zeroed) tensor of a dtype and shape. */
    public static Tensor empty(DType dtype, int... shape) {
        Objects.requireNonNull(dtype, "dtype");
        int[] s = shape.clone();
        int n = Shapes.numel(s);
        return new Tensor(Storage.allocate((long) n * dtype.byteSize()), dtype, s, Shapes.contiguousStrides(s), 0,
                null);
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
            Ops.fill(t, value);
        }
        return t;
    }

    /** Zeros with the dtype and shape of {@code t}, on its device. */
    public static Tensor zerosLike(Tensor t) {
        return t.device().isCpu() ? empty(t.dtype, t.shape) : Placement.empty(t.device(), t.dtype, t.shape);
    }

    /** Ones with the dtype and shape of {@code t}, on its device. */
    public static Tensor onesLike(Tensor t) {
        return t.device().isCpu() ? full(1.0, t.dtype, t.shape) : Placement.full(t.device(), t.dtype, 1.0, t.shape);
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
        return Factories.of(data, data.length, DType.FLOAT32, ValueLayout.JAVA_FLOAT, shape);
    }

    /** A float64 tensor holding a copy of {@code data}; see {@link #of(float[], int...)}. */
    public static Tensor of(double[] data, int... shape) {
        return Factories.of(data, data.length, DType.FLOAT64, ValueLayout.JAVA_DOUBLE, shape);
    }

    /** An int32 tensor holding a copy of {@code data}; see {@link #of(float[], int...)}. */
    public static Tensor of(int[] data, int... shape) {
        return Factories.of(data, data.length, DType.INT32, ValueLayout.JAVA_INT, shape);
    }

    /** An int64 tensor holding a copy of {@code data}; see {@link #of(float[], int...)}. */
    public static Tensor of(long[] data, int... shape) {
        return Factories.of(data, data.length, DType.INT64, ValueLayout.JAVA_LONG, shape);
    }

    /** A bool tensor holding a copy of {@code data}; see {@link #of(float[], int...)}. */
    public static Tensor of(boolean[] data, int... shape) {
        return Factories.of(data, shape);
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

    // ---------------------------------------------------------------- devices

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
        return Placement.to(this, target);
    }

    /** This tensor in host memory: itself, or a copy of a device tensor. */
    public Tensor cpu() {
        return Placement.to(this, Device.CPU);
    }

    /**
     * A zero-filled tensor on {@code device}.
     *
     * @throws IllegalArgumentException when no device runtime serves the device, or a size is negative
     */
    public static Tensor empty(Device device, DType dtype, int... shape) {
        return Placement.empty(device, dtype, shape);
    }

    /** {@link #empty(Device, DType, int...)}: zeros on {@code device}. */
    public static Tensor zeros(Device device, DType dtype, int... shape) {
        return Placement.empty(device, dtype, shape);
    }

    /** Ones on {@code device}. */
    public static Tensor ones(Device device, DType dtype, int... shape) {
        return Placement.full(device, dtype, 1.0, shape);
    }

    /** {@code value} in every element, on {@code device}. */
    public static Tensor full(double value, DType dtype, Device device, int... shape) {
        return Placement.full(device, dtype, value, shape);
    }

    /**
     * A tensor over device memory that other code allocated, without a copy: collectives and device operations
     * read and write it in place, and its owner keeps it (tensorbus never frees it).
     *
     * @param memory the device runtime's handle: a JOCL {@code cl_mem} for {@code opencl:N}
     * @throws IllegalArgumentException when the handle is not memory of that device, or is too small for the shape
     */
    public static Tensor fromDeviceMemory(Device device, Object memory, DType dtype, int... shape) {
        return Placement.wrap(device, memory, dtype, shape);
    }


    // ---------------------------------------------------------------- conversions and views

    /** A contiguous copy when needed, else this tensor. */
    public Tensor contiguous() {
        return Dispatch.of(this).contiguous(this);
    }

    /** A contiguous copy with its own storage, recorded by autograd. */
    public Tensor clone() {
        return Dispatch.of(this).clone(this);
    }

    /** This tensor converted to {@code target} (this tensor when it already has that dtype). */
    public Tensor to(DType target) {
        return Dispatch.of(this).to(this, target);
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
            throw new IllegalArgumentException("t() expects a tensor with <= 2 dimensions, got shape "
                    + Shapes.str(shape));
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
        return Dispatch.of(tensors).cat(tensors, dim);
    }

    /** Stacks along a new dimension. */
    public static Tensor stack(List<Tensor> tensors, int dim) {
        return Dispatch.of(tensors).stack(tensors, dim);
    }

    /** Reduces a broadcast gradient back to {@code target} by summing the broadcast dimensions. */
    public Tensor sumToShape(int... target) {
        return Dispatch.of(this).sumToShape(this, target);
    }

    // ---------------------------------------------------------------- arithmetic

    /** {@code this + other} with broadcasting. */
    public Tensor add(Tensor other) {
        return Dispatch.of(this, other).add(this, other, 1.0);
    }

    /** {@code this + alpha * other} with broadcasting ({@code torch.add(..., alpha=)}). */
    public Tensor add(Tensor other, double alpha) {
        return Dispatch.of(this, other).add(this, other, alpha);
    }

    /** {@code this + value}. */
    public Tensor add(double value) {
        return Dispatch.of(this).add(this, value);
    }

    /** {@code this - other} with broadcasting. */
    public Tensor sub(Tensor other) {
        return Dispatch.of(this, other).sub(this, other);
    }

    /** {@code this - value}. */
    public Tensor sub(double value) {
        return Dispatch.of(this).add(this, -value);
    }

    /** {@code this * other} with broadcasting. */
    public Tensor mul(Tensor other) {
        return Dispatch.of(this, other).mul(this, other);
    }

    /** {@code this * value}. */
    public Tensor mul(double value) {
        return Dispatch.of(this).mul(this, value);
    }

    /** {@code this / other} with broadcasting (true division: integers give float32). */
    public Tensor div(Tensor other) {
        return Dispatch.of(this, other).div(this, other);
    }

    /** {@code this / value}. */
    public Tensor div(double value) {
        return Dispatch.of(this).div(this, value);
    }

    /** {@code -this}. */
    public Tensor neg() {
        return Dispatch.of(this).mul(this, -1.0);
    }

    /** {@code e^this}. */
    public Tensor exp() {
        return Dispatch.of(this).exp(this);
    }

    /** Natural logarithm. */
    public Tensor log() {
        return Dispatch.of(this).log(this);
    }

    /** {@code this ^ exponent}. */
    public Tensor pow(double exponent) {
        return Dispatch.of(this).pow(this, exponent);
    }

    /** {@code this ^ exponent} elementwise, with broadcasting. */
    public Tensor pow(Tensor exponent) {
        return Dispatch.of(this, exponent).pow(this, exponent);
    }

    /** Square root. */
    public Tensor sqrt() {
        return Dispatch.of(this).sqrt(this);
    }

    /** Absolute value. */
    public Tensor abs() {
        return Dispatch.of(this).abs(this);
    }

    /** Clamps into {@code [min, max]}; pass infinities for a one-sided clamp. */
    public Tensor clamp(double min, double max) {
        return Dispatch.of(this).clamp(this, min, max);
    }

    /** {@code max(this, 0)}. */
    public Tensor relu() {
        return Dispatch.of(this).relu(this);
    }

    /** The logistic function. */
    public Tensor sigmoid() {
        return Dispatch.of(this).sigmoid(this);
    }

    /** Hyperbolic tangent. */
    public Tensor tanh() {
        return Dispatch.of(this).tanh(this);
    }

    /** Elementwise {@code this == other} as bool (not differentiable). */
    public Tensor eq(Tensor other) {
        return Dispatch.of(this, other).compare(this, other, "eq");
    }

    /** Elementwise {@code this > other} as bool. */
    public Tensor gt(Tensor other) {
        return Dispatch.of(this, other).compare(this, other, "gt");
    }

    /** Elementwise {@code this < other} as bool. */
    public Tensor lt(Tensor other) {
        return Dispatch.of(this, other).compare(this, other, "lt");
    }

    /** Elementwise {@code this > value} as bool. */
    public Tensor gt(double value) {
        return gt(scalar(value, dtype.isFloatingPoint() ? dtype : DType.FLOAT64));
    }

    /** Elementwise {@code this < value} as bool. */
    public Tensor lt(double value) {
        return lt(scalar(value, dtype.isFloatingPoint() ? dtype : DType.FLOAT64));
    }

    // ---------------------------------------------------------------- in place

    /** {@code this += other} in place (broadcasting {@code other}); returns this. */
    public Tensor addi(Tensor other) {
        return Dispatch.of(this, other).addi(this, other, 1.0);
    }

    /** {@code this += alpha * other} in place; returns this. */
    public Tensor addi(Tensor other, double alpha) {
        return Dispatch.of(this, other).addi(this, other, alpha);
    }

    /** {@code this += value} in place. */
    public Tensor addi(double value) {
        return Dispatch.of(this).addi(this, value);
    }

    /** {@code this -= other} in place. */
    public Tensor subi(Tensor other) {
        return Dispatch.of(this, other).subi(this, other);
    }

    /** {@code this -= value} in place. */
    public Tensor subi(double value) {
        return Dispatch.of(this).addi(this, -value);
    }

    /** {@code this *= other} in place. */
    public Tensor muli(Tensor other) {
        return Dispatch.of(this, other).muli(this, other);
    }

    /** {@code this *= value} in place. */
    public Tensor muli(double value) {
        return Dispatch.of(this).muli(this, value);
    }

    /** {@code this /= other} in place. */
    public Tensor divi(Tensor other) {
        return Dispatch.of(this, other).divi(this, other);
    }

    /** {@code this /= value} in place. */
    public Tensor divi(double value) {
        return Dispatch.of(this).divi(this, value);
    }

    /** Sets every element to zero in place. */
    public Tensor zeroi() {
        return filli(0.0);
    }

    /** Sets every element to {@code value} in place. */
    public Tensor filli(double value) {
        return Dispatch.of(this).filli(this, value);
    }

    /**
     * Copies {@code src} (broadcast to this shape, converted to this dtype) into this tensor in place.
     *
     * @throws IllegalArgumentException when {@code src} cannot be broadcast to this shape
     */
    public Tensor copyi(Tensor src) {
        return Dispatch.of(this).copyi(this, Objects.requireNonNull(src, "src"));
    }

    // ---------------------------------------------------------------- reductions

    /** Sum of all elements. */
    public Tensor sum() {
        return Dispatch.of(this).sum(this);
    }

    /** Sum over {@code dims}. */
    public Tensor sum(int[] dims, boolean keepDim) {
        return Dispatch.of(this).sum(this, dims, keepDim);
    }

    /** Sum over one dimension. */
    public Tensor sum(int dim, boolean keepDim) {
        return sum(new int[] {dim}, keepDim);
    }

    /** Mean of all elements. */
    public Tensor mean() {
        return Dispatch.of(this).mean(this);
    }

    /** Mean over {@code dims}. */
    public Tensor mean(int[] dims, boolean keepDim) {
        return Dispatch.of(this).mean(this, dims, keepDim);
    }

    /** Mean over one dimension. */
    public Tensor mean(int dim, boolean keepDim) {
        return mean(new int[] {dim}, keepDim);
    }

    /** The largest element. */
    public Tensor max() {
        return Dispatch.of(this).maxAll(this, true);
    }

    /** The largest element along {@code dim} (values; see {@link #argmax} for indices). */
    public Tensor max(int dim, boolean keepDim) {
        return Dispatch.of(this).maxDim(this, dim, keepDim, true)[0];
    }

    /** The smallest element. */
    public Tensor min() {
        return Dispatch.of(this).maxAll(this, false);
    }

    /** The smallest element along {@code dim}. */
    public Tensor min(int dim, boolean keepDim) {
        return Dispatch.of(this).maxDim(this, dim, keepDim, false)[0];
    }

    /** The index (int64) of the largest element along {@code dim}; the first one on ties. */
    public Tensor argmax(int dim, boolean keepDim) {
        return Dispatch.of(this).maxDim(this, dim, keepDim, true)[1];
    }

    /** The flat index of the largest element. */
    public Tensor argmax() {
        return reshape(-1).argmax(0, false);
    }

    /** The index (int64) of the smallest element along {@code dim}. */
    public Tensor argmin(int dim, boolean keepDim) {
        return Dispatch.of(this).maxDim(this, dim, keepDim, false)[1];
    }

    /** Softmax along {@code dim}. */
    public Tensor softmax(int dim) {
        return Dispatch.of(this).softmax(this, dim);
    }

    /** Log-softmax along {@code dim}, computed stably. */
    public Tensor logSoftmax(int dim) {
        return Dispatch.of(this).logSoftmax(this, dim);
    }

    // ---------------------------------------------------------------- linear algebra and indexing

    /** Matrix product with NumPy's rules for 1-d and batched operands ({@code torch.matmul}). */
    public Tensor matmul(Tensor other) {
        return Dispatch.of(this, other).matmul(this, other);
    }

    /** Product of two matrices. */
    public Tensor mm(Tensor other) {
        return Dispatch.of(this, other).mm(this, other);
    }

    /** Batched product of {@code [b, n, k]} and {@code [b, k, m]}. */
    public Tensor bmm(Tensor other) {
        return Dispatch.of(this, other).bmm(this, other);
    }

    /** The rows (entries along {@code dim}) listed in an int64 {@code index} ({@code index_select}). */
    public Tensor indexSelect(int dim, Tensor index) {
        return Dispatch.of(this, index).indexSelect(this, dim, index);
    }

    /** {@code torch.gather}: {@code out[i][j] = this[i][index[i][j]]} for {@code dim = 1}. */
    public Tensor gather(int dim, Tensor index) {
        return Dispatch.of(this, index).gather(this, dim, index);
    }

    /** {@code torch.scatter}: a copy with {@code src} written at {@code index} along {@code dim}. */
    public Tensor scatter(int dim, Tensor index, Tensor src) {
        return Dispatch.of(List.of(this, index, src)).scatter(this, dim, index, src);
    }

    /** {@code torch.scatter} with one value written at every {@code index}. */
    public Tensor scatter(int dim, Tensor index, double value) {
        return Dispatch.of(this, index).scatter(this, dim, index, value);
    }

    /** One-hot encoding of an int64 tensor of class indices, as int64 ({@code F.one_hot}). */
    public static Tensor oneHot(Tensor indices, int numClasses) {
        return Dispatch.of(indices).oneHot(indices, numClasses);
    }

    // ---------------------------------------------------------------- printing

    /** Prints like PyTorch: values (summarised past 1000 elements), shape, dtype and {@code grad_fn}. */
    @Override
    public String toString() {
        return Printer.print(this);
    }
}
