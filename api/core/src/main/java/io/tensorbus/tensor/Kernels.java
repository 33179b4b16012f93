package io.tensorbus.tensor;

import io.tensorbus.DType;
import java.lang.foreign.MemorySegment;
import java.util.List;

/**
 * The kernel table of one kind of memory: every tensor operation that reads or writes elements, as ATen's
 * dispatcher reaches a kernel per dispatch key. {@link Dispatch} picks the table from the operands' devices and
 * {@link Tensor}'s methods call it. A table lists what it computes; an operation it lacks falls to the default
 * here, which refuses naming the operation and the device. {@link HostKernels} computes every operation (a test
 * holds it to that); {@link DeviceRuntimeKernels} computes what device runtimes offer.
 *
 * <p>Operations that only change a tensor's geometry (views) read no element and are not dispatched; a view
 * that must copy (a reshape of a strided tensor) reaches a kernel through {@link #contiguous} or {@link #clone}.
 */
interface Kernels {
    /** {@code a + alpha * b}, broadcasting. */
    default Tensor add(Tensor a, Tensor b, double alpha) {
        throw Dispatch.missing("add", a, b);
    }

    /** {@code a - b}, broadcasting. */
    default Tensor sub(Tensor a, Tensor b) {
        throw Dispatch.missing("sub", a, b);
    }

    /** {@code a * b}, broadcasting. */
    default Tensor mul(Tensor a, Tensor b) {
        throw Dispatch.missing("mul", a, b);
    }

    /** {@code a / b}, true division, broadcasting. */
    default Tensor div(Tensor a, Tensor b) {
        throw Dispatch.missing("div", a, b);
    }

    /** {@code a + v}. */
    default Tensor add(Tensor a, double v) {
        throw Dispatch.missing("add", a);
    }

    /** {@code a * v}. */
    default Tensor mul(Tensor a, double v) {
        throw Dispatch.missing("mul", a);
    }

    /** {@code a / v}. */
    default Tensor div(Tensor a, double v) {
        throw Dispatch.missing("div", a);
    }

    /** {@code self += alpha * other} in place. */
    default Tensor addi(Tensor self, Tensor other, double alpha) {
        throw Dispatch.missing("addi", self, other);
    }

    /** {@code self -= other} in place. */
    default Tensor subi(Tensor self, Tensor other) {
        throw Dispatch.missing("subi", self, other);
    }

    /** {@code self *= other} in place. */
    default Tensor muli(Tensor self, Tensor other) {
        throw Dispatch.missing("muli", self, other);
    }

    /** {@code self /= other} in place. */
    default Tensor divi(Tensor self, Tensor other) {
        throw Dispatch.missing("divi", self, other);
    }

    /** {@code self += v} in place. */
    default Tensor addi(Tensor self, double v) {
        throw Dispatch.missing("addi", self);
    }

    /** {@code self *= v} in place. */
    default Tensor muli(Tensor self, double v) {
        throw Dispatch.missing("muli", self);
    }

    /** {@code self /= v} in place. */
    default Tensor divi(Tensor self, double v) {
        throw Dispatch.missing("divi", self);
    }

    /** Every element of {@code self} set to {@code v}. */
    default Tensor filli(Tensor self, double v) {
        throw Dispatch.missing("filli", self);
    }

    /** {@code src} copied into {@code self}, broadcast and converted; {@code src} may live anywhere. */
    default Tensor copyi(Tensor self, Tensor src) {
        throw Dispatch.missing("copyi", self);
    }

    /** A contiguous copy with its own storage. */
    default Tensor clone(Tensor t) {
        throw Dispatch.missing("clone", t);
    }

    /** {@code t} when contiguous, else a contiguous copy. */
    default Tensor contiguous(Tensor t) {
        throw Dispatch.missing("contiguous", t);
    }

    /** {@code t} converted to {@code dtype}. */
    default Tensor to(Tensor t, DType dtype) {
        throw Dispatch.missing("to", t);
    }

    /** The sum of all elements. */
    default Tensor sum(Tensor t) {
        throw Dispatch.missing("sum", t);
    }

    /** The mean of all elements. */
    default Tensor mean(Tensor t) {
        throw Dispatch.missing("mean", t);
    }

    /** {@code t} where the host can read its elements: itself, or a host copy. */
    default Tensor readable(Tensor t) {
        throw Dispatch.missing("item", t);
    }

    /** The bytes of a contiguous tensor, without a copy. */
    default MemorySegment dataSegment(Tensor t) {
        throw Dispatch.missing("dataSegment", t);
    }

    /** One element written in place. */
    default Tensor set(Tensor t, double value, int[] index) {
        throw Dispatch.missing("set", t);
    }

    /** {@code e^a}. */
    default Tensor exp(Tensor a) {
        throw Dispatch.missing("exp", a);
    }

    /** The natural logarithm. */
    default Tensor log(Tensor a) {
        throw Dispatch.missing("log", a);
    }

    /** The square root. */
    default Tensor sqrt(Tensor a) {
        throw Dispatch.missing("sqrt", a);
    }

    /** The absolute value. */
    default Tensor abs(Tensor a) {
        throw Dispatch.missing("abs", a);
    }

    /** {@code max(a, 0)}. */
    default Tensor relu(Tensor a) {
        throw Dispatch.missing("relu", a);
    }

    /** The logistic function. */
    default Tensor sigmoid(Tensor a) {
        throw Dispatch.missing("sigmoid", a);
    }

    /** The hyperbolic tangent. */
    default Tensor tanh(Tensor a) {
        throw Dispatch.missing("tanh", a);
    }

    /** {@code a ^ e}. */
    default Tensor pow(Tensor a, double e) {
        throw Dispatch.missing("pow", a);
    }

    /** {@code a ^ e} element-wise, broadcasting. */
    default Tensor pow(Tensor a, Tensor e) {
        throw Dispatch.missing("pow", a, e);
    }

    /** {@code a} clamped into {@code [min, max]}. */
    default Tensor clamp(Tensor a, double min, double max) {
        throw Dispatch.missing("clamp", a);
    }

    /** The element-wise comparison {@code op} ({@code eq}, {@code gt}, {@code lt}) as bool. */
    default Tensor compare(Tensor a, Tensor b, String op) {
        throw Dispatch.missing(op, a, b);
    }

    /** The sum over {@code dims}. */
    default Tensor sum(Tensor t, int[] dims, boolean keepDim) {
        throw Dispatch.missing("sum", t);
    }

    /** The mean over {@code dims}. */
    default Tensor mean(Tensor t, int[] dims, boolean keepDim) {
        throw Dispatch.missing("mean", t);
    }

    /** A broadcast gradient summed back to {@code target}'s shape. */
    default Tensor sumToShape(Tensor t, int[] target) {
        throw Dispatch.missing("sumToShape", t);
    }

    /** The largest ({@code max}) or smallest element. */
    default Tensor maxAll(Tensor t, boolean max) {
        throw Dispatch.missing(max ? "max" : "min", t);
    }

    /** Values and int64 indices of the largest ({@code max}) or smallest elements along {@code dim}. */
    default Tensor[] maxDim(Tensor t, int dim, boolean keepDim, boolean max) {
        throw Dispatch.missing(max ? "max" : "min", t);
    }

    /** Softmax along {@code dim}. */
    default Tensor softmax(Tensor t, int dim) {
        throw Dispatch.missing("softmax", t);
    }

    /** Log-softmax along {@code dim}. */
    default Tensor logSoftmax(Tensor t, int dim) {
        throw Dispatch.missing("logSoftmax", t);
    }

    /** {@code torch.matmul}. */
    default Tensor matmul(Tensor a, Tensor b) {
        throw Dispatch.missing("matmul", a, b);
    }

    /** The product of two matrices. */
    default Tensor mm(Tensor a, Tensor b) {
        throw Dispatch.missing("mm", a, b);
    }

    /** The batched product of {@code [b, n, k]} and {@code [b, k, m]}. */
    default Tensor bmm(Tensor a, Tensor b) {
        throw Dispatch.missing("bmm", a, b);
    }

    /** {@code index_select}. */
    default Tensor indexSelect(Tensor t, int dim, Tensor index) {
        throw Dispatch.missing("indexSelect", t, index);
    }

    /** {@code torch.gather}. */
    default Tensor gather(Tensor t, int dim, Tensor index) {
        throw Dispatch.missing("gather", t, index);
    }

    /** {@code torch.scatter} of a source tensor. */
    default Tensor scatter(Tensor t, int dim, Tensor index, Tensor src) {
        throw Dispatch.missing("scatter", t, index, src);
    }

    /** {@code torch.scatter} of one value. */
    default Tensor scatter(Tensor t, int dim, Tensor index, double value) {
        throw Dispatch.missing("scatter", t, index);
    }

    /** {@code F.one_hot}. */
    default Tensor oneHot(Tensor indices, int numClasses) {
        throw Dispatch.missing("oneHot", indices);
    }

    /** Concatenation along an existing dimension. */
    default Tensor cat(List<Tensor> tensors, int dim) {
        throw Dispatch.missing("cat", tensors.toArray(Tensor[]::new));
    }

    /** Stacking along a new dimension. */
    default Tensor stack(List<Tensor> tensors, int dim) {
        throw Dispatch.missing("stack", tensors.toArray(Tensor[]::new));
    }
}
