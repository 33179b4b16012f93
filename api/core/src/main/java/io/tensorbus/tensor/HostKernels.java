package io.tensorbus.tensor;

import io.tensorbus.internal.tensor.Access;
import java.lang.foreign.MemorySegment;

/**
 * The kernel table of host memory: every operation, on the Vector API kernels of {@link Ops}, {@link ReduceOps},
 * {@link LinalgOps}, {@link IndexOps} and {@link ViewOps}, which also record autograd. What devices compute too
 * comes from {@link CompositeKernels}; here are the operations only the host has.
 */
final class HostKernels extends CompositeKernels {
    static final HostKernels INSTANCE = new HostKernels();

    private HostKernels() {
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
    public Tensor sum(Tensor t) {
        return ReduceOps.sum(t, null, false);
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
}
