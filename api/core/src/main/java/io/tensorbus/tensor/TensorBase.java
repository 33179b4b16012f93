package io.tensorbus.tensor;

import io.tensorbus.DType;
import io.tensorbus.Device;
import io.tensorbus.autograd.Autograd;
import io.tensorbus.autograd.Node;
import io.tensorbus.autograd.RemovableHandle;
import io.tensorbus.internal.tensor.Access;
import io.tensorbus.internal.tensor.Shapes;
import io.tensorbus.internal.tensor.Strided;
import io.tensorbus.internal.tensor.TensorInternals;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Collections;
import java.util.Arrays;
import java.util.List;
import java.util.function.UnaryOperator;

/**
 * What a {@link Tensor} is, apart from what can be computed from it, as ATen's {@code TensorBase}: the view of
 * storage (dtype, shape, strides, offset), its elements, and the autograd state. {@link Tensor} is the only
 * subclass and adds the factories and operations; user code names {@code Tensor}, never this type.
 */
public abstract sealed class TensorBase permits Tensor {
    /**
     * Storage, strides and offset change only through {@link #setData}, as PyTorch's {@code param.data = ...}:
     * {@code Module.to(Device)} moves a parameter and keeps the object every layer and optimizer holds.
     */
    Storage storage;
    final DType dtype;
    final int[] shape;
    int[] strides;
    long offset;
    final Tensor base;

    /** Made on first need, by {@link AutogradMeta}: most tensors never join a graph. */
    AutogradMeta autograd;

    TensorBase(Storage storage, DType dtype, int[] shape, int[] strides, long offset, Tensor base) {
        this.storage = storage;
        this.dtype = dtype;
        this.shape = shape;
        this.strides = strides;
        this.offset = offset;
        this.base = base;
    }

    /**
     * Points this tensor at {@code data}'s elements (same dtype and shape, any device), keeping its identity and
     * autograd state; its gradient, if any, moves to the new device.
     *
     * @throws IllegalArgumentException for another dtype or shape, or a view (whose storage its base shares)
     */
    final void setData(Tensor data) {
        if (data.dtype != dtype || !Arrays.equals(data.shape, shape)) {
            throw new IllegalArgumentException("setData: expected " + dtype + Shapes.str(shape) + ", got "
                    + data.dtype + Shapes.str(data.shape));
        }
        if (base != null) {
            throw new IllegalArgumentException("setData: a view shares its base's storage and cannot take other data");
        }
        Tensor grad = autograd == null ? null : self().grad();
        storage = data.storage;
        strides = data.strides.clone();
        offset = data.offset;
        if (grad != null && !grad.device().equals(data.device())) {
            AutogradMeta.setGrad(self(), grad.detach().to(data.device()));
        }
    }

    /** This tensor as the one subclass it can be. */
    private Tensor self() {
        return (Tensor) this;
    }

    // ---------------------------------------------------------------- metadata

    /** The element type. */
    public DType dtype() {
        return dtype;
    }

    /** Where the storage lives: {@link Device#CPU}, or the device {@link Tensor#to(Device)} moved it to. */
    public Device device() {
        return storage.device();
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
     * @throws IllegalStateException when the tensor is not contiguous (call {@link Tensor#contiguous()} first)
     */
    public MemorySegment dataSegment() {
        return Dispatch.of(self()).dataSegment(self());
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
        Tensor h = Dispatch.of(self()).readable(self());
        if (h.numel() != 1) {
            throw new IllegalStateException("item() needs a tensor with one element, this one has shape "
                    + Shapes.str(shape) + " (" + numel() + " elements)");
        }
        return Access.getDouble(h.storage.segment(), dtype, h.offset);
    }

    /** The value of a one-element integer or bool tensor as a long (exact for int64). */
    public long longItem() {
        Tensor h = Dispatch.of(self()).readable(self());
        h.item();
        return Access.getLong(h.storage.segment(), dtype, h.offset);
    }

    /**
     * The element at {@code index} (one index per dimension, negative counts from the end).
     *
     * @throws IllegalArgumentException for the wrong number of indices or one out of range
     */
    public double getDouble(int... index) {
        Tensor h = Dispatch.of(self()).readable(self());
        return Access.getDouble(h.storage.segment(), dtype, h.elementOffset(index));
    }

    /** The element at {@code index} as a long; see {@link #getDouble(int...)}. */
    public long getLong(int... index) {
        Tensor h = Dispatch.of(self()).readable(self());
        return Access.getLong(h.storage.segment(), dtype, h.elementOffset(index));
    }

    /**
     * Writes one element in place (bumps the version; not recorded by autograd).
     *
     * @throws IllegalArgumentException for a bad index
     */
    public Tensor set(double value, int... index) {
        return Dispatch.of(self()).set(self(), value, index);
    }

    /** The storage index of the element at {@code index}, checked. */
    long elementOffset(int[] index) {
        return Shapes.elementOffset(shape, strides, offset, index);
    }

    /** The elements converted to {@code as}, contiguous, in host memory. */
    private MemorySegment hostElements(DType as) {
        return Dispatch.of(self()).readable(self()).to(as).contiguous().dataSegment();
    }

    /** The elements in row-major order as floats (converted from any dtype). */
    public float[] toFloatArray() {
        return hostElements(DType.FLOAT32).toArray(ValueLayout.JAVA_FLOAT);
    }

    /** The elements in row-major order as doubles. */
    public double[] toDoubleArray() {
        return hostElements(DType.FLOAT64).toArray(ValueLayout.JAVA_DOUBLE);
    }

    /** The elements in row-major order as longs (floats truncate). */
    public long[] toLongArray() {
        return hostElements(DType.INT64).toArray(ValueLayout.JAVA_LONG);
    }

    /** The elements in row-major order as ints (floats truncate). */
    public int[] toIntArray() {
        return hostElements(DType.INT32).toArray(ValueLayout.JAVA_INT);
    }

    // ---------------------------------------------------------------- autograd state

    /** True when gradients are computed for this tensor. */
    public boolean requiresGrad() {
        return AutogradMeta.requiresGrad(self());
    }

    /**
     * Marks a leaf as needing gradients ({@code requires_grad_}); returns this.
     *
     * @throws IllegalArgumentException for a non-floating dtype, or to turn it off on a non-leaf
     */
    public Tensor requiresGrad(boolean value) {
        AutogradMeta.setRequiresGrad(self(), value);
        return self();
    }

    /** True for tensors created by the user (not the result of a recorded op). */
    public boolean isLeaf() {
        return gradFn() == null;
    }

    /** The accumulated gradient of a leaf, or null before the first backward. */
    public Tensor grad() {
        return AutogradMeta.grad(self());
    }

    /**
     * Replaces the accumulated gradient (null clears it).
     *
     * @throws IllegalArgumentException when the gradient's shape or dtype differs from this tensor's
     */
    public void setGrad(Tensor grad) {
        AutogradMeta.setGrad(self(), grad);
    }

    /** The node that computes this tensor's gradient inputs, or null for a leaf. */
    public Node gradFn() {
        return AutogradMeta.gradFn(self());
    }

    /** Which output of {@link #gradFn()} this tensor is. */
    public int outputNr() {
        return AutogradMeta.outputNr(self());
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
        Node node = gradFn();
        return node != null ? node.registerTensorPreHook(outputNr(), hook)
                : AutogradMeta.gradAccumulator(self()).registerTensorPreHook(0, hook);
    }

    /** Keeps the gradient of a non-leaf tensor in {@link #grad()} after backward ({@code retain_grad}). */
    public Tensor retainGrad() {
        AutogradMeta.retainGrad(self());
        return self();
    }

    /** Backward from a one-element tensor ({@code loss.backward()}). */
    public void backward() {
        Autograd.backward(List.of(self()), null, false);
    }

    /** Backward with an explicit gradient of this tensor. */
    public void backward(Tensor gradient) {
        backward(gradient, false);
    }

    /** Backward with an explicit gradient (null for a scalar), keeping the graph when {@code retainGraph}. */
    public void backward(Tensor gradient, boolean retainGraph) {
        Autograd.backward(List.of(self()), Collections.singletonList(gradient), retainGraph);
    }

    /** A tensor sharing storage with this one but cut from the graph. */
    public Tensor detach() {
        return new Tensor(storage, dtype, shape, strides, offset, null);
    }

    /** Marks this tensor as cut from the graph in place; returns this. */
    public Tensor detachi() {
        AutogradMeta.detach(self());
        return self();
    }
}
