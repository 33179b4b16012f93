package io.tensorbus.optim;

import io.tensorbus.DType;
import io.tensorbus.internal.tensor.DeviceTensorKernels;
import io.tensorbus.internal.tensor.TensorInternals;
import io.tensorbus.tensor.Tensor;

/**
 * The optimizers' updates of device parameters in one kernel launch each, as PyTorch's {@code foreach}/fused
 * CUDA paths: the same arithmetic as the host's update (its in-place multiply-adds fused, as its Vector API loop
 * fuses them), the state staying on the device. Used for contiguous float32 and float64 parameters, gradients and
 * state of one dtype; anything else takes the tensor operations.
 */
final class FusedSteps {
    private FusedSteps() {
    }

    /** Whether every tensor lives on one device, is contiguous, and shares the parameter's floating dtype. */
    static boolean applies(Tensor param, Tensor... others) {
        if (!TensorInternals.onDevice(param) || !param.isContiguous()
                || (param.dtype() != DType.FLOAT32 && param.dtype() != DType.FLOAT64)) {
            return false;
        }
        for (Tensor t : others) {
            if (t != null && (!t.device().equals(param.device()) || !t.isContiguous() || t.dtype() != param.dtype())) {
                return false;
            }
        }
        return true;
    }

    /** SGD's update; {@code buf} is the momentum buffer (filled on the {@code first} step), or null without one. */
    static void sgd(Tensor param, Tensor grad, Tensor buf, double lr, double momentum, double dampening,
            double weightDecay, boolean nesterov, boolean first) {
        TensorInternals.launch("SGD.step", DeviceTensorKernels.program(param.dtype()), DeviceTensorKernels.SGD_STEP,
                param.numel(), 0, param, grad, buf == null ? param : buf, (long) param.numel(), lr, momentum,
                dampening, weightDecay, nesterov ? 1 : 0, first ? 1 : 0);
        bumped(param, buf);
    }

    /** Adam's (AdamW's, when {@code decoupled}) update of step {@code step}. */
    static void adam(Tensor param, Tensor grad, Tensor expAvg, Tensor expAvgSq, double lr, double beta1, double beta2,
            double eps, double weightDecay, boolean decoupled, double step) {
        double stepSize = lr / (1 - Math.pow(beta1, step));
        double biasCorrection2Sqrt = Math.sqrt(1 - Math.pow(beta2, step));
        TensorInternals.launch("Adam.step", DeviceTensorKernels.program(param.dtype()), DeviceTensorKernels.ADAM_STEP,
                param.numel(), 0, param, grad, expAvg, expAvgSq, (long) param.numel(), lr, beta1, beta2, eps,
                weightDecay, decoupled ? 1 : 0, stepSize, biasCorrection2Sqrt);
        bumped(param, expAvg, expAvgSq);
    }

    /** In-place writes bump the version counters, as the tensor operations' would. */
    private static void bumped(Tensor... written) {
        for (Tensor t : written) {
            if (t != null) {
                TensorInternals.storage(t).bumpVersion();
            }
        }
    }
}
