package io.tensorbus.nn;

import static io.tensorbus.autograd.GradCheck.check;
import static io.tensorbus.autograd.GradCheck.randn;

import io.tensorbus.DType;
import io.tensorbus.tensor.Generator;
import io.tensorbus.tensor.Tensor;
import org.junit.jupiter.api.Test;

/** Finite-difference checks of every differentiable function in {@link Functional}, in float64. */
class FunctionalGradientTest {
    @Test
    void linearHasCorrectGradients() {
        check("linear", x -> Functional.linear(x.get(0), x.get(1), x.get(2)), randn(1, 4, 3), randn(2, 5, 3),
                randn(3, 5));
        check("linear no bias, 3-d input", x -> Functional.linear(x.get(0), x.get(1), null), randn(1, 2, 4, 3),
                randn(2, 5, 3));
    }

    @Test
    void conv2dHasCorrectGradientsForEveryOption() {
        Tensor x = randn(4, 2, 4, 6, 5);
        check("conv2d 3x3 pad 1", v -> Functional.conv2d(v.get(0), v.get(1), v.get(2), 1, 1), x, randn(5, 3, 4, 3, 3),
                randn(6, 3));
        check("conv2d stride 2 dilation 2", v -> Functional.conv2d(v.get(0), v.get(1), null, new int[] {2, 1},
                new int[] {2, 1}, new int[] {2, 1}, 1), x, randn(7, 3, 4, 3, 2));
        check("conv2d groups", v -> Functional.conv2d(v.get(0), v.get(1), v.get(2), new int[] {1, 1},
                new int[] {0, 1}, new int[] {1, 1}, 2), x, randn(8, 4, 2, 2, 3), randn(9, 4));
        check("conv2d depthwise", v -> Functional.conv2d(v.get(0), v.get(1), null, new int[] {1, 1},
                new int[] {1, 1}, new int[] {1, 1}, 4), x, randn(10, 4, 1, 3, 3));
        check("conv2d same-size dilated", v -> Functional.conv2d(v.get(0), v.get(1), null, new int[] {1, 1},
                new int[] {2, 2}, new int[] {2, 2}, 1), x, randn(13, 2, 4, 3, 3));
        check("conv2d same-size 5x5 and 1x3", v -> Functional.conv2d(Functional.conv2d(v.get(0), v.get(1), null, 1, 2),
                v.get(2), null, new int[] {1, 1}, new int[] {0, 1}, new int[] {1, 1}, 1), x, randn(14, 3, 4, 5, 5),
                randn(15, 2, 3, 1, 3));
        check("conv2d 1x1", v -> Functional.conv2d(v.get(0), v.get(1), v.get(2), 1, 0), x, randn(11, 3, 4, 1, 1),
                randn(12, 3));
    }

    @Test
    void poolingHasCorrectGradients() {
        Tensor x = randn(13, 2, 3, 7, 6);
        check("maxPool2d", v -> Functional.maxPool2d(v.get(0), new int[] {3, 2}, new int[] {2, 2},
                new int[] {1, 0}, false), x);
        check("maxPool2d ceil", v -> Functional.maxPool2d(v.get(0), new int[] {2, 2}, null, new int[] {0, 0}, true), x);
        check("avgPool2d pad", v -> Functional.avgPool2d(v.get(0), new int[] {3, 3}, new int[] {2, 2},
                new int[] {1, 1}, false, true), x);
        check("avgPool2d exclude pad", v -> Functional.avgPool2d(v.get(0), new int[] {3, 3}, new int[] {2, 1},
                new int[] {1, 1}, true, false), x);
        check("adaptiveAvgPool2d", v -> Functional.adaptiveAvgPool2d(v.get(0), 3, 4), x);
    }

    @Test
    void batchNormHasCorrectGradientsInTrainingAndInference() {
        Tensor x = randn(14, 4, 3, 2, 2);
        check("batchNorm train", v -> Functional.batchNorm(v.get(0), null, null, v.get(1), v.get(2), true, 0.1, 1e-5),
                x, randn(15, 3), randn(16, 3));
        Tensor rm = randn(17, 3);
        Tensor rv = randn(18, 3).abs().add(0.5);
        check("batchNorm eval", v -> Functional.batchNorm(v.get(0), rm, rv, v.get(1), v.get(2), false, 0.1, 1e-5),
                x, randn(15, 3), randn(16, 3));
        check("batchNorm 2-d", v -> Functional.batchNorm(v.get(0), null, null, null, null, true, 0.1, 1e-5),
                randn(19, 5, 3));
    }

    @Test
    void dropoutHasCorrectGradientsForAFixedMask() {
        check("dropout", v -> Functional.dropout(v.get(0), 0.3, true, new Generator(7)), randn(20, 4, 5));
    }

    @Test
    void lossesHaveCorrectGradients() {
        Tensor target = Tensor.of(new long[] {1, 0, 3, 3, 2});
        check("crossEntropy", v -> Functional.crossEntropy(v.get(0), target), randn(21, 5, 4));
        Tensor classWeight = randn(22, 4).abs();
        check("crossEntropy sum weighted", v -> Functional.crossEntropy(v.get(0), target, classWeight, -100,
                Reduction.SUM), randn(21, 5, 4));
        check("nllLoss ignore index", v -> Functional.nllLoss(v.get(0).logSoftmax(1), target, null, 3,
                Reduction.MEAN), randn(23, 5, 4));
        check("nllLoss none", v -> Functional.nllLoss(v.get(0), target, null, -100, Reduction.NONE), randn(24, 5, 4));
        Tensor t4 = Tensor.randint(new Generator(3), 0, 3, 2, 2, 2);
        check("crossEntropy 4-d", v -> Functional.crossEntropy(v.get(0), t4), randn(25, 2, 3, 2, 2));
        check("mseLoss mean", v -> Functional.mseLoss(v.get(0), v.get(1), Reduction.MEAN), randn(26, 3, 4),
                randn(27, 3, 4));
        check("mseLoss sum", v -> Functional.mseLoss(v.get(0), v.get(1), Reduction.SUM), randn(26, 3, 4),
                randn(27, 3, 4));
        check("mseLoss none", v -> Functional.mseLoss(v.get(0), v.get(1), Reduction.NONE), randn(26, 3, 4),
                randn(27, 3, 4).to(DType.FLOAT64));
    }
}
