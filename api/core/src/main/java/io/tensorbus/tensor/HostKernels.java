package io.tensorbus.tensor;

import io.tensorbus.DType;
import io.tensorbus.internal.tensor.Access;
import java.lang.foreign.MemorySegment;
import java.util.List;

/**
 * The kernel table of host memory: every operation, on the Vector API kernels of {@link Ops}, {@link ReduceOps},
 * {@link LinalgOps}, {@link IndexOps} and {@link ViewOps}, which also record autograd.
 */
final class HostKernels implements Kernels {
    static final HostKernels INSTANCE = new HostKernels();

    private HostKernels() {
    }

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
    public Tensor addi(Tensor self, Tensor other, double alpha) {
        return Ops.inplace(self, other, alpha, "add");
    }

    @Override
    public Tensor subi(Tensor self, Tensor other) {
        return Ops.inplace(self, other, -1.0, "add");
    }

    @Override
    public Tensor muli(Tensor self, Tensor other) {
        return Ops.inplace(self, other, 1.0, "mul");
    }

    @Override
    public Tensor divi(Tensor self, Tensor other) {
        return Ops.inplace(self, other, 1.0, "div");
    }

    @Override
    public Tensor addi(Tensor self, double v) {
        return Ops.inplaceScalar(self, v, "add");
    }

    @Override
    public Tensor muli(Tensor self, double v) {
        return Ops.inplaceScalar(self, v, "mul");
    }

    @Override
    public Tensor divi(Tensor self, double v) {
        return Ops.inplaceScalar(self, v, "div");
    }

    @Override
    public Tensor filli(Tensor self, double v) {
        return Ops.filli(self, v);
    }

    @Override
    public Tensor copyi(Tensor self, Tensor src) {
        return Ops.copyi(self, src.cpu());
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
    public Tensor sum(Tensor t) {
        return ReduceOps.sum(t, null, false);
    }

    @Override
    public Tensor mean(Tensor t) {
        return ReduceOps.mean(t, null, false);
    }

    @Override
    public Tensor readable(Tensor t) {
        return t;
    }

    @Override
    public MemorySegment dataSegment(Tensor t) {
        if (!t.isContiguous()) {
            throw new IllegalStateException("dataSegment() needs a contiguous tensor; call contiguous() first");
        }
        long es = t.dtype().byteSize();
        return t.storage().segment().asSlice(t.storageOffset() * es, (long) t.numel() * es);
    }

    @Override
    public Tensor set(Tensor t, double value, int[] index) {
        AutogradMeta.checkInplace(t, "set");
        Access.setDouble(t.storage().segment(), t.dtype(), t.elementOffset(index), value);
        t.storage().bumpVersion();
        return t;
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
}
