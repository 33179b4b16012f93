package io.tensorbus.nn;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.tensorbus.DType;
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

    @Test
    void inputGradientsOfOneImageMatchTheBatchedLoweringForSamePlaneAndPointwiseKernels() {
        // One image takes the per-image path, whose same-plane and pointwise input gradients write gx with
        // beta-0 GEMMs instead of adding into zeros; two take the batched lowering (col2im into zeros). The core
        // suite fills uninitialized memory with NaN, so an element the per-image path missed shows here.
        for (DType dtype : new DType[] {DType.FLOAT32, DType.FLOAT64}) {
            for (int k : new int[] {3, 1}) {
                Tensor x = Tensor.randn(2, 3, 5, 6).to(dtype);
                Tensor w = Tensor.randn(4, 3, k, k).to(dtype);
                Tensor both = inputGradient(x, w, k / 2);
                for (int n = 0; n < 2; n++) {
                    Tensor one = inputGradient(x.narrow(0, n, 1).contiguous(), w, k / 2);
                    double[] expected = both.narrow(0, n, 1).to(DType.FLOAT64).toDoubleArray();
                    double[] actual = one.to(DType.FLOAT64).toDoubleArray();
                    for (int i = 0; i < expected.length; i++) {
                        double tolerance = 1e-5 * Math.max(1, Math.abs(expected[i]));
                        assertEquals(expected[i], actual[i], tolerance, dtype + " " + k + "x" + k + ", image " + n);
                    }
                }
            }
        }
    }

    private static Tensor inputGradient(Tensor x, Tensor w, int pad) {
        Tensor leaf = x.detach().requiresGrad(true);
        Tensor y = Functional.conv2d(leaf, w, null, new int[] {1, 1}, new int[] {pad, pad}, new int[] {1, 1}, 1);
        // The same upstream gradient for every image: position-dependent, so that every tap matters.
        Tensor perImage = Tensor.arange(y.numel() / y.size(0)).to(y.dtype()).view(1, y.size(1), y.size(2), y.size(3));
        y.mul(perImage).sum().backward();
        return leaf.grad();
    }
}
