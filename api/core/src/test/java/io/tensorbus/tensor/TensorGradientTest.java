package io.tensorbus.tensor;

import static io.tensorbus.autograd.GradCheck.check;
import static io.tensorbus.autograd.GradCheck.randn;
import static io.tensorbus.autograd.GradCheck.uniform;

import io.tensorbus.DType;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Finite-difference checks of every differentiable tensor op, in float64. */
class TensorGradientTest {
    private final Tensor a = randn(1, 3, 4);
    private final Tensor b = randn(2, 3, 4);
    private final Tensor row = randn(3, 4);
    private final Tensor positive = uniform(4, 0.5, 2.0, 3, 4);

    @Test
    void arithmeticWithBroadcastingHasCorrectGradients() {
        check("add", x -> x.get(0).add(x.get(1)), a, row);
        check("add alpha", x -> x.get(0).add(x.get(1), 2.5), a, b);
        check("sub", x -> x.get(0).sub(x.get(1)), randn(5, 2, 1, 4), a);
        check("mul", x -> x.get(0).mul(x.get(1)), a, randn(6, 3, 1));
        check("div", x -> x.get(0).div(x.get(1)), a, positive);
        check("scalar forms", x -> x.get(0).add(1.5).sub(0.5).mul(3.0).div(2.0).neg(), a);
    }

    @Test
    void unaryFunctionsHaveCorrectGradients() {
        check("exp", x -> x.get(0).exp(), a);
        check("log", x -> x.get(0).log(), positive);
        check("pow scalar", x -> x.get(0).pow(3.0), a);
        check("pow fractional", x -> x.get(0).pow(1.7), positive);
        check("pow tensor", x -> x.get(0).pow(x.get(1)), positive, randn(7, 3, 4));
        check("sqrt", x -> x.get(0).sqrt(), positive);
        check("abs", x -> x.get(0).abs(), a);
        check("clamp", x -> x.get(0).clamp(-0.5, 0.7), a);
        check("relu", x -> x.get(0).relu(), a);
        check("sigmoid", x -> x.get(0).sigmoid(), a);
        check("tanh", x -> x.get(0).tanh(), a);
    }

    @Test
    void matrixProductsHaveCorrectGradients() {
        check("mm", x -> x.get(0).mm(x.get(1)), randn(8, 3, 5), randn(9, 5, 2));
        check("mm transposed operands", x -> x.get(0).t().mm(x.get(1).t()), randn(8, 5, 3), randn(9, 2, 5));
        check("bmm", x -> x.get(0).bmm(x.get(1)), randn(10, 2, 3, 4), randn(11, 2, 4, 5));
        check("matmul 1d.1d", x -> x.get(0).matmul(x.get(1)), randn(12, 4), randn(13, 4));
        check("matmul 1d.2d", x -> x.get(0).matmul(x.get(1)), randn(12, 4), randn(13, 4, 3));
        check("matmul 2d.1d", x -> x.get(0).matmul(x.get(1)), randn(12, 3, 4), randn(13, 4));
        check("matmul broadcast", x -> x.get(0).matmul(x.get(1)), randn(14, 2, 1, 3, 4), randn(15, 3, 4, 2));
    }

    @Test
    void reductionsHaveCorrectGradients() {
        Tensor t = randn(16, 2, 3, 4);
        check("sum all", x -> x.get(0).sum(), t);
        check("sum dims keepdim", x -> x.get(0).sum(new int[] {0, 2}, true), t);
        check("sum dim", x -> x.get(0).sum(-1, false), t);
        check("mean all", x -> x.get(0).mean(), t);
        check("mean dim", x -> x.get(0).mean(1, false), t);
        check("max dim", x -> x.get(0).max(2, false), t);
        check("min dim keepdim", x -> x.get(0).min(1, true), t);
        check("max all", x -> x.get(0).max(), t);
        check("min all", x -> x.get(0).min(), t);
        check("softmax", x -> x.get(0).softmax(1), t);
        check("logSoftmax", x -> x.get(0).logSoftmax(-1), t);
    }

    @Test
    void viewsAndShapeOpsHaveCorrectGradients() {
        Tensor t = randn(17, 2, 3, 4);
        check("view", x -> x.get(0).view(6, 4).mul(x.get(0).view(6, 4)), t);
        check("reshape of transposed", x -> x.get(0).transpose(0, 2).reshape(-1), t);
        check("flatten", x -> x.get(0).flatten(1, 2), t);
        check("permute", x -> x.get(0).permute(2, 0, 1).contiguous(), t);
        check("narrow", x -> x.get(0).narrow(2, 1, 2), t);
        check("slice step", x -> x.get(0).slice(2, 0, 4, 2), t);
        check("select", x -> x.get(0).select(1, -1), t);
        check("expand", x -> x.get(0).expand(3, 2, 3, 4), randn(18, 2, 1, 4));
        check("squeeze/unsqueeze", x -> x.get(0).squeeze(1).unsqueeze(0), randn(19, 2, 1, 4));
        check("clone", x -> x.get(0).clone(), t);
    }

    @Test
    void joiningAndSplittingHaveCorrectGradients() {
        check("cat", x -> Tensor.cat(List.of(x.get(0), x.get(1)), 1), randn(20, 2, 3), randn(21, 2, 5));
        check("stack", x -> Tensor.stack(List.of(x.get(0), x.get(1)), 0), randn(20, 2, 3), randn(21, 2, 3));
        check("split", x -> x.get(0).split(2, 1).get(1).mul(2.0), randn(22, 3, 5));
        check("split sizes", x -> {
            List<Tensor> p = x.get(0).split(new int[] {1, 3, 1}, 1);
            return p.get(0).add(p.get(2)).mul(p.get(1).sum(1, true));
        }, randn(22, 3, 5));
        check("chunk", x -> x.get(0).chunk(3, 0).get(2), randn(23, 7, 2));
    }

    @Test
    void indexingHasCorrectGradients() {
        Tensor idx = Tensor.of(new long[] {2, 0, 2});
        check("indexSelect", x -> x.get(0).indexSelect(0, idx), randn(24, 3, 4));
        Tensor g = Tensor.of(new long[] {0, 2, 1, 1, 0, 0}, 3, 2);
        check("gather", x -> x.get(0).gather(1, g), randn(25, 3, 4));
        Tensor s = Tensor.of(new long[] {1, 0, 2, 2}, 1, 4);
        check("scatter", x -> x.get(0).scatter(0, s, x.get(1)), randn(26, 3, 4), randn(27, 1, 4));
        check("scatter value", x -> x.get(0).scatter(1, Tensor.of(new long[] {1, 3, 0}, 3, 1), 5.0), randn(28, 3, 4));
    }

    @Test
    void inPlaceOpsOnNonLeavesHaveCorrectGradients() {
        check("addi", x -> x.get(0).mul(1.0).addi(x.get(1)), a, row);
        check("muli", x -> x.get(0).mul(2.0).muli(x.get(1)), a, b);
        check("divi", x -> x.get(0).mul(1.0).divi(x.get(1)), a, positive);
        check("subi scalar", x -> x.get(0).mul(x.get(0)).subi(3.0), a);
        check("copyi", x -> x.get(0).mul(1.0).copyi(x.get(1)), a, row);
    }

    @Test
    void inPlaceOpsThroughViewsHaveCorrectGradients() {
        check("muli through a narrow view", x -> {
            Tensor buf = x.get(0).mul(2.0);
            buf.narrow(1, 1, 2).muli(x.get(1));
            return buf;
        }, a, randn(30, 3, 2));
        check("addi through a transposed view", x -> {
            Tensor buf = x.get(0).mul(1.0);
            buf.t().select(0, 2).addi(x.get(1), 3.0);
            return buf.mul(buf);
        }, a, randn(31, 3));
        check("copyi into a slice of a plain buffer", x -> {
            Tensor buf = Tensor.zeros(DType.FLOAT64, 3, 4);
            buf.slice(1, 0, 4, 2).copyi(x.get(0).exp());
            return buf.mul(x.get(1));
        }, randn(32, 3, 2), b);
        check("view taken before the base changed in place", x -> {
            Tensor y = x.get(0).mul(2.0);
            Tensor v = y.narrow(0, 1, 2);
            y.muli(x.get(1));
            return v.mul(v);
        }, a, b);
    }
}
