package io.tensorbus.nn;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tensorbus.DType;
import io.tensorbus.tensor.Tensor;
import org.junit.jupiter.api.Test;

/** Loss behaviours that must match PyTorch 1.13, with the PyTorch output of the same call. */
class LossSemanticsTest {
    @Test
    void nllLossRejectsASpatialTargetOfTheWrongShape() {
        // F.nll_loss(torch.randn(2, 3, 4), torch.zeros(4, 2, dtype=torch.long))
        //   -> RuntimeError: Expected input batch_size (2) to match target batch_size (4).
        // tensorbus only compares element counts (8 == 2*4) and pairs positions up wrongly.
        Tensor input = Tensor.zeros(2, 3, 4);
        Tensor target = Tensor.zeros(DType.INT64, 4, 2);
        Throwable e = assertThrows(IllegalArgumentException.class,
                () -> Functional.nllLoss(input, target, null, -100, Reduction.NONE));
        assertTrue(e.getMessage().contains("[4, 2]"), e.getMessage());
    }
}
