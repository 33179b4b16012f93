package io.tensorbus.spi.contract;

import static io.tensorbus.spi.contract.DeviceParity.assertClose;
import static io.tensorbus.spi.contract.DeviceParity.random;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.tensorbus.DType;
import io.tensorbus.Device;
import io.tensorbus.autograd.Autograd;
import io.tensorbus.nn.Functional;
import io.tensorbus.tensor.Tensor;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Every device operation with autograd gives what the host gives, forward and backward, within float32 rounding:
 * each case runs once on host leaves and once on the same values on the suite's device, with odd shapes, broadcasting
 * and strided views (transposes, narrows, expands) among the inputs, and compares outputs and gradients.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
public abstract class DeviceAutogradParityTest extends DeviceSuite {

    private void parity(String what, Function<List<Tensor>, Tensor> f, Tensor... inputs) {
        DeviceParity.check(dev(), what, f, inputs);
    }

    @Test
    void arithmeticBroadcastsOverOddShapesAndStridedViews() {
        Tensor a = random(1, 5, 7);
        Tensor b = random(2, 7);
        Tensor c = random(3, 7, 5);
        parity("a + b[7]", x -> x.get(0).add(x.get(1)), a, b);
        parity("a - 2.5 b[5, 1]", x -> x.get(0).add(x.get(1), -2.5), a, random(4, 5, 1));
        parity("a.t() * c", x -> x.get(0).t().mul(x.get(1)), a, c);
        parity("a / (|b| + 1)", x -> x.get(0).div(x.get(1).abs().add(1.0)), a, b);
        parity("scalars", x -> x.get(0).mul(2.5).add(1.0).div(3.0).sub(x.get(0).neg()), a);
        parity("narrowed columns", x -> x.get(0).narrow(1, 2, 4).mul(x.get(0).narrow(1, 1, 4)), a);
        parity("expanded row times matrix", x -> x.get(1).unsqueeze(0).expand(5, 7).mul(x.get(0)), a, b);
    }

    @Test
    void functionsAndTheirGradientsMatchTheHost() {
        Tensor a = random(5, 4, 9, 3);
        parity("exp", x -> x.get(0).exp(), a);
        parity("log", x -> x.get(0).abs().add(0.1).log(), a);
        parity("sqrt", x -> x.get(0).abs().add(0.1).sqrt(), a);
        parity("relu of a transpose", x -> x.get(0).transpose(0, 2).relu(), a);
        parity("sigmoid", x -> x.get(0).sigmoid(), a);
        parity("tanh", x -> x.get(0).tanh(), a);
        parity("pow 2.5", x -> x.get(0).abs().add(0.1).pow(2.5), a);
        parity("pow of tensors", x -> x.get(0).abs().add(0.5).pow(x.get(1)), a, random(6, 3));
        parity("clamp", x -> x.get(0).clamp(-0.5, 0.7), a);
    }

    @Test
    void reductionsAndSoftmaxMatchTheHost() {
        Tensor a = random(7, 6, 11, 5);
        parity("sum over 0 and 2", x -> x.get(0).sum(new int[] {0, 2}, false), a);
        parity("sum over 1 keeping it", x -> x.get(0).sum(new int[] {1}, true), a);
        parity("mean over the last", x -> x.get(0).mean(new int[] {2}, false), a);
        parity("whole sum", x -> x.get(0).sum(), a);
        parity("largest element", x -> x.get(0).max(), a);
        parity("smallest of ties", x -> x.get(0).clamp(-0.5, 0.5).min(), a);
        parity("softmax along 1", x -> x.get(0).softmax(1), a);
        parity("logSoftmax along the last", x -> x.get(0).logSoftmax(-1), a);
        parity("logSoftmax of a transpose", x -> x.get(0).transpose(1, 2).logSoftmax(1), a);
        Tensor d = a.to(dev());
        assertClose(a.max(1, false), d.max(1, false).cpu(), "max along 1");
        Tensor labels = a.argmax(1, false);
        assertArrayEquals(labels.toLongArray(), d.argmax(1, false).cpu().toLongArray(), "argmax along 1");
        assertArrayEquals(a.gt(a.mul(0.5)).toLongArray(), d.gt(d.mul(0.5)).cpu().toLongArray(), "gt");
        long[] g = labels.toLongArray();
        for (int i = 0; i < g.length; i += 2) {
            g[i] = (g[i] + 1) % 11;
        }
        Tensor guess = Tensor.of(g, labels.shape());
        assertArrayEquals(labels.eq(guess).toLongArray(), d.argmax(1, false).eq(guess.to(dev())).cpu().toLongArray(),
                "eq of int64 tensors");
    }

    @Test
    void matrixProductsMatchTheHostWithTransposedOperands() {
        Tensor a = random(8, 5, 7);
        Tensor b = random(9, 7, 3);
        parity("mm", x -> x.get(0).mm(x.get(1)), a, b);
        parity("mm of transposes", x -> x.get(1).t().mm(x.get(0).t()), a, b);
        parity("bmm", x -> x.get(0).bmm(x.get(1)), random(10, 2, 5, 7), random(11, 2, 7, 3));
        parity("batched matmul broadcasting the matrix", x -> x.get(0).matmul(x.get(1)), random(12, 2, 5, 7), b);
        parity("matrix times vector", x -> x.get(0).matmul(x.get(1)), a, random(13, 7));
        parity("linear", x -> Functional.linear(x.get(0), x.get(1), x.get(2)), random(14, 4, 7), random(15, 3, 7),
                random(16, 3));
    }

    @Test
    void hooksNoGradAndRetainedGraphsBehaveAsOnTheHost() {
        Tensor x = random(30, 3, 4).to(dev()).requiresGrad(true);
        List<Tensor> seen = new ArrayList<>();
        x.registerHook(g -> {
            seen.add(g);
            return g.mul(2.0);
        });
        Tensor y = x.mul(x).sum();
        y.backward(null, true);
        assertEquals(1, seen.size(), "the hook ran once");
        assertEquals(dev(), seen.get(0).device(), "the hook sees the device gradient");
        assertClose(x.detach().mul(4.0).cpu(), x.grad().cpu(), "the hook's doubled gradient was accumulated");
        y.backward(null, false);
        assertClose(x.detach().mul(8.0).cpu(), x.grad().cpu(), "a retained graph runs again, accumulating");
        try (var ignored = Autograd.noGrad()) {
            Tensor z = x.mul(3.0);
            assertEquals(false, z.requiresGrad(), "nothing is recorded under noGrad");
            assertEquals(dev(), z.device());
        }
        List<Tensor> grads = Autograd.grad(List.of(x.exp().sum()), List.of(x), null, false, false);
        assertClose(x.detach().exp().mul(2.0).cpu(), grads.get(0).cpu(), "Autograd.grad on the device, hooked");
    }

    @Test
    void aTwoLayerNetworkTrainsOnTheDeviceAsOnTheHost() {
        Tensor input = random(20, 16, 12);
        long[] labels = new long[16];
        for (int i = 0; i < labels.length; i++) {
            labels[i] = i % 4;
        }
        Tensor target = Tensor.oneHot(Tensor.of(labels, 16), 4).to(DType.FLOAT32);
        List<Tensor> hostParams = List.of(random(21, 8, 12).mul(0.3), random(22, 8).mul(0.1),
                random(23, 4, 8).mul(0.3), random(24, 4).mul(0.1));
        double[] hostLosses = train(hostParams, input, target, Device.CPU);
        double[] deviceLosses = train(hostParams, input, target, dev());
        for (int step = 0; step < hostLosses.length; step++) {
            assertEquals(hostLosses[step], deviceLosses[step], 1e-4 * Math.abs(hostLosses[step]), "loss at step "
                    + step);
        }
    }

    private static double[] train(List<Tensor> initial, Tensor input, Tensor target, Device device) {
        List<Tensor> params = new ArrayList<>();
        for (Tensor p : initial) {
            params.add(p.detach().clone().to(device).requiresGrad(true));
        }
        Tensor x = input.to(device);
        Tensor y = target.to(device);
        double[] losses = new double[10];
        for (int step = 0; step < losses.length; step++) {
            Tensor h = Functional.linear(x, params.get(0), params.get(1)).relu();
            Tensor logp = Functional.linear(h, params.get(2), params.get(3)).logSoftmax(1);
            Tensor loss = logp.mul(y).sum().neg().div(x.size(0));
            losses[step] = loss.item();
            loss.backward();
            try (var ignored = Autograd.noGrad()) {
                for (Tensor p : params) {
                    p.subi(p.grad().mul(0.5));
                    p.grad().zeroi();
                }
            }
        }
        return losses;
    }
}
