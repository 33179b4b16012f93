package io.tensorbus.nn;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import io.tensorbus.tensor.Tensor;
import org.junit.jupiter.api.Test;

/** conv2d on unusual geometry (taps wholly in the padding, grouped and dilated), as PyTorch 1.13. */
class ConvEdgeCaseTest {
    @Test
    void aKernelTapLyingWhollyInThePaddingGivesZerosInsteadOfAnOutOfBoundsCopy() {
        // x = torch.ones(1, 1, 1, 1, requires_grad=True); w = torch.tensor([[[[1., 2., 3.]]]], requires_grad=True)
        // y = F.conv2d(x, w, padding=(0, 4), dilation=(1, 3)) -> tensor([0., 2., 0.])
        // (y * torch.tensor([1., 10., 100.])).sum().backward(); x.grad -> [20.], w.grad -> [0., 10., 0.]
        Tensor x = Tensor.ones(1, 1, 1, 1).requiresGrad(true);
        Tensor w = Tensor.of(new float[] {1, 2, 3}, 1, 1, 1, 3).requiresGrad(true);
        Tensor y = Functional.conv2d(x, w, null, new int[] {1, 1}, new int[] {0, 4}, new int[] {1, 3}, 1);
        assertArrayEquals(new float[] {0, 2, 0}, y.toFloatArray());
        y.mul(Tensor.of(new float[] {1, 10, 100}, 1, 1, 1, 3)).sum().backward();
        assertArrayEquals(new float[] {20}, x.grad().toFloatArray());
        assertArrayEquals(new float[] {0, 10, 0}, w.grad().toFloatArray());
    }

    @Test
    void groupedDilatedConvolutionWithPaddingWiderThanTheInputMatchesPyTorch() {
        // x = torch.arange(3.).reshape(1, 3, 1, 1)
        // F.conv2d(x, torch.ones(3, 1, 1, 3), padding=(0, 4), dilation=3, groups=3).flatten()
        //   -> tensor([0., 0., 0., 0., 1., 0., 0., 2., 0.])
        Tensor x = Tensor.of(new float[] {0, 1, 2}, 1, 3, 1, 1);
        Tensor y = Functional.conv2d(x, Tensor.ones(3, 1, 1, 3), null, new int[] {1, 1}, new int[] {0, 4},
                new int[] {3, 3}, 3);
        assertArrayEquals(new float[] {0, 0, 0, 0, 1, 0, 0, 2, 0}, y.toFloatArray());
    }
}
