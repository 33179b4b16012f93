package io.tensorbus.tensor;

import io.tensorbus.DType;
import io.tensorbus.autograd.AccumulateGrad;
import io.tensorbus.autograd.Node;
import io.tensorbus.internal.tensor.TensorInternals;
import io.tensorbus.spi.DeviceBuffer;
import io.tensorbus.spi.KernelSource;

/** What {@link TensorInternals} reaches on a tensor for our other packages; installed by {@link Tensor}. */
final class TensorAccess implements TensorInternals.Access {
    @Override
    public void setGradFn(Tensor t, Node node, int outputNr) {
        AutogradMeta.setGradFn(t, node, outputNr);
    }

    @Override
    public AccumulateGrad gradAccumulator(Tensor t) {
        return AutogradMeta.gradAccumulator(t);
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
    public DeviceBuffer deviceBuffer(Tensor t, String what) {
        return DeviceRuntimeKernels.buffer(t, what);
    }

    @Override
    public void adoptIntoScope(Tensor t) {
        MemoryScope.track(t.storage());
    }

    @Override
    public void setData(Tensor t, Tensor data) {
        t.setData(data);
    }

    @Override
    public void launch(String op, KernelSource program, String kernel, long items, int groupSize, Object... args) {
        DeviceOps.launch(op, program, kernel, items, groupSize, args);
    }
}
