package io.tensorbus.tensor;

import io.tensorbus.DType;
import java.util.List;

/**
 * The operations host and device tables share, as PyTorch's composite and autograd kernels are shared by every
 * backend: each records autograd once ({@link Ops}, {@link ReduceOps}, {@link LinalgOps}, {@link ViewOps}) and runs
 * raw kernels that look at where their operands live, the host's Vector API loops or a device runtime's kernels
 * ({@link DeviceOps}). A raw kernel that has no device form refuses, naming the operation and the device.
 */
abstract class CompositeKernels implements Kernels {
    @Override
    public Tensor add(Tensor a, Tensor b, double alpha) {
        return Ops.add(a, b, alpha);
    }

    @Override
    public Tensor sub(Tensor a, Tensor b) {
        return Ops.add(a, b, -1.0);
    }

    @Override
    public Tensor mul(Tensor a, Tensor b) {
        return Ops.mul(a, b);
    }

    @Override
    public Tensor div(Tensor a, Tensor b) {
        return Ops.div(a, b);
    }

    @Override
    public Tensor add(Tensor a, double v) {
        return Ops.addScalar(a, v);
    }

    @Override
    public Tensor mul(Tensor a, double v) {
        return Ops.mulScalar(a, v);
    }

    @Override
    public Tensor div(Tensor a, double v) {
        return Ops.divScalar(a, v);
    }

    @Override
    public Tensor clone(Tensor t) {
        return ViewOps.clone(t);
    }

    @Override
    public Tensor contiguous(Tensor t) {
        return t.isContiguous() ? t : ViewOps.clone(t);
    }

    @Override
    public Tensor to(Tensor t, DType dtype) {
        return ViewOps.to(t, dtype);
    }

    @Override
    public Tensor exp(Tensor a) {
        return Ops.exp(a);
    }

    @Override
    public Tensor log(Tensor a) {
        return Ops.log(a);
    }

    @Override
    public Tensor sqrt(Tensor a) {
        return Ops.sqrt(a);
    }

    @Override
    public Tensor abs(Tensor a) {
        return Ops.abs(a);
    }

    @Override
    public Tensor relu(Tensor a) {
        return Ops.relu(a);
    }

    @Override
    public Tensor sigmoid(Tensor a) {
        return Ops.sigmoid(a);
    }

    @Override
    public Tensor tanh(Tensor a) {
        return Ops.tanh(a);
    }

    @Override
    public Tensor pow(Tensor a, double e) {
        return Ops.powScalar(a, e);
    }

    @Override
    public Tensor pow(Tensor a, Tensor e) {
        return Ops.pow(a, e);
    }

    @Override
    public Tensor clamp(Tensor a, double min, double max) {
        return Ops.clamp(a, min, max);
    }

    @Override
    public Tensor compare(Tensor a, Tensor b, String op) {
        return Ops.compare(a, b, op);
    }

    @Override
    public Tensor sum(Tensor t, int[] dims, boolean keepDim) {
        return ReduceOps.sum(t, dims, keepDim);
    }

    @Override
    public Tensor mean(Tensor t) {
        return ReduceOps.mean(t, null, false);
    }

    @Override
    public Tensor mean(Tensor t, int[] dims, boolean keepDim) {
        return ReduceOps.mean(t, dims, keepDim);
    }

    @Override
    public Tensor sumToShape(Tensor t, int[] target) {
        return ReduceOps.sumToShape(t, target);
    }

    @Override
    public Tensor maxAll(Tensor t, boolean max) {
        return ReduceOps.maxAll(t, max);
    }

    @Override
    public Tensor[] maxDim(Tensor t, int dim, boolean keepDim, boolean max) {
        return ReduceOps.maxDim(t, dim, keepDim, max);
    }

    @Override
    public Tensor softmax(Tensor t, int dim) {
        return ReduceOps.softmax(t, dim);
    }

    @Override
    public Tensor logSoftmax(Tensor t, int dim) {
        return ReduceOps.logSoftmax(t, dim);
    }

    @Override
    public Tensor indexSelect(Tensor t, int dim, Tensor index) {
        return IndexOps.indexSelect(t, dim, index);
    }

    @Override
    public Tensor gather(Tensor t, int dim, Tensor index) {
        return IndexOps.gather(t, dim, index);
    }

    @Override
    public Tensor scatter(Tensor t, int dim, Tensor index, Tensor src) {
        return IndexOps.scatter(t, dim, index, src);
    }

    @Override
    public Tensor scatter(Tensor t, int dim, Tensor index, double value) {
        return IndexOps.scatterValue(t, dim, index, value);
    }

    @Override
    public Tensor oneHot(Tensor indices, int numClasses) {
        return IndexOps.oneHot(indices, numClasses);
    }

    @Override
    public Tensor cat(List<Tensor> tensors, int dim) {
        return ViewOps.cat(tensors, dim);
    }

    @Override
    public Tensor stack(List<Tensor> tensors, int dim) {
        return ViewOps.stack(tensors, dim);
    }

    @Override
    public Tensor matmul(Tensor a, Tensor b) {
        return LinalgOps.matmul(a, b);
    }

    @Override
    public Tensor mm(Tensor a, Tensor b) {
        return LinalgOps.mm(a, b);
    }

    @Override
    public Tensor bmm(Tensor a, Tensor b) {
        return LinalgOps.bmm(a, b);
    }
}
