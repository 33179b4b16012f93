package io.tensorbus.spi.contract;

import static io.tensorbus.spi.contract.DeviceParity.assertClose;
import static io.tensorbus.spi.contract.DeviceParity.random;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

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
        parity("a view walking seven dimensions", x -> x.get(0).permute(6, 5, 4, 3, 2, 1, 0).contiguous().mul(2.0),
                random(40, 2, 3, 2, 2, 3, 2, 3));
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
        parity("max along 1", x -> x.get(0).max(1, false), a);
        parity("min of ties along the last, kept", x -> x.get(0).clamp(-0.5, 0.5).min(2, true), a);
        parity("max along 0 of a transpose", x -> x.get(0).transpose(0, 2).max(0, false), a);
        Tensor d = a.to(dev());
        assertClose(a.max(1, false), d.max(1, false).cpu(), "max along 1");
        Tensor ints = Tensor.of(new int[] {1, -2, 3, 2_000_000_000, 2_000_000_000, 6, 7, 8, 9, 10, 11, 12}, 2, 3, 2);
        assertArrayEquals(ints.sum(new int[] {1}, false).toLongArray(), ints.to(dev()).sum(new int[] {1}, false).cpu()
                .toLongArray(), "int32 sums along a dimension, exact in int64");
        assertArrayEquals(ints.sum(new int[] {0, 2}, true).toLongArray(), ints.to(dev()).transpose(0, 1)
                .sum(new int[] {1, 2}, true).cpu().toLongArray(), "int32 sums of a transpose");
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
    void catAndStackJoinDeviceTensorsAsTheHost() {
        parity("cat of views along 1", x -> Tensor.cat(List.of(x.get(0), x.get(1).t(), x.get(0).narrow(1, 1, 2)), 1),
                random(20, 4, 3), random(21, 5, 4));
        parity("cat along 0 with an empty part", x -> Tensor.cat(List.of(x.get(0), x.get(0).narrow(0, 0, 0),
                x.get(1)), 0), random(22, 2, 3), random(23, 4, 3));
        parity("stack along the last", x -> Tensor.stack(List.of(x.get(0), x.get(1).mul(2)), -1), random(24, 3, 5),
                random(25, 3, 5));
        Tensor ints = Tensor.of(new long[] {1, 2, 3}, 1, 3);
        Tensor floats = random(26, 2, 3);
        assertClose(Tensor.cat(List.of(ints, floats), 0), Tensor.cat(List.of(ints.to(dev()), floats.to(dev())), 0)
                .cpu(), "cat promotes int64 and float32 to float32");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Tensor.cat(List.of(floats.to(dev()), floats), 0));
        assertTrue(e.getMessage().contains("cat") && e.getMessage().contains(dev().toString())
                && e.getMessage().contains("cpu"), e.getMessage());
    }

    @Test
    void indexOpsSelectGatherAndScatterAsTheHostWithDuplicateIndices() {
        Tensor rows = Tensor.of(new long[] {3, 0, -1, 3, 1}, 5);
        parity("indexSelect rows with duplicates", x -> x.get(0).indexSelect(0, near(rows, x)), random(30, 4, 3, 2));
        parity("indexSelect along 1 of a transpose", x -> x.get(0).t().indexSelect(1, near(rows, x)), random(31, 4, 6));
        Tensor idx = Tensor.of(new long[] {0, 2, 2, 1, 1, 1, 0, 0, 2, 2, 0, 1}, 4, 3);
        parity("gather along 1 with duplicates", x -> x.get(0).gather(1, near(idx, x)), random(32, 4, 5));
        parity("gather along 0 of a transpose", x -> x.get(0).t().gather(0, near(idx.narrow(1, 0, 2).t(), x)),
                random(33, 5, 4));
        parity("scatter of a source, the last duplicate winning", x -> x.get(0).scatter(1, near(idx, x), x.get(1)),
                random(34, 4, 5), random(35, 4, 3));
        parity("scatter of a value", x -> x.get(0).scatter(1, near(idx, x), -7.0), random(36, 4, 5));
        Tensor labels = Tensor.of(new long[] {2, 0, 4, 2}, 2, 2);
        assertArrayEquals(Tensor.oneHot(labels, 5).toLongArray(), Tensor.oneHot(labels.to(dev()), 5).cpu()
                .toLongArray(), "oneHot");
        Tensor ints = Tensor.of(new long[] {5, 6, 7, 8}, 2, 2);
        assertArrayEquals(ints.gather(1, labels.sub(labels).add(1L)).toLongArray(), ints.to(dev())
                .gather(1, labels.sub(labels).add(1L).to(dev())).cpu().toLongArray(), "gather of int64 elements");
        Tensor host = random(39, 3, 4);
        Tensor device = host.to(dev());
        host.t().set(5.5, 3, 1);
        device.t().set(5.5, 3, 1);
        device.set(-2, 0, 0);
        host.set(-2, 0, 0);
        assertClose(host, device.cpu(), "set through a transpose and in place");
        assertThrows(IllegalArgumentException.class, () -> device.set(1, 3, 0));
        IllegalArgumentException bad = assertThrows(IllegalArgumentException.class,
                () -> random(37, 4, 5).to(dev()).gather(1, idx.add(3L).to(dev())));
        assertTrue(bad.getMessage().contains("out of bounds"), bad.getMessage());
        IllegalArgumentException mixed = assertThrows(IllegalArgumentException.class,
                () -> random(38, 4, 5).to(dev()).indexSelect(0, rows));
        assertTrue(mixed.getMessage().contains("indexSelect") && mixed.getMessage().contains("cpu"),
                mixed.getMessage());
        assertThrows(IllegalArgumentException.class, () -> random(38, 4, 5).indexSelect(0, rows.to(dev())));
        IllegalArgumentException source = assertThrows(IllegalArgumentException.class,
                () -> random(38, 4, 5).to(dev()).scatter(1, idx.to(dev()), random(35, 4, 3)));
        assertTrue(source.getMessage().contains("source"), source.getMessage());
        long big = (1L << 53) + 1;
        Tensor bigs = Tensor.of(new long[] {big, -big}, 2);
        Tensor at = Tensor.of(new long[] {2, 0}, 2);
        assertArrayEquals(Tensor.zeros(DType.INT64, 3).scatter(0, at, bigs).toLongArray(), Tensor.zeros(DType.INT64, 3)
                .to(dev()).scatter(0, at.to(dev()), bigs.to(dev())).cpu().toLongArray(), "int64 scatter, exact");
    }

    @Test
    void scatterAddsRoundAsTheHostsAndHalvesAccumulateInFloat() {
        Tensor three = Tensor.of(new long[] {0, 0, 0}, 1, 3);
        Tensor g = Tensor.of(new float[] {1, 4e-8f, 4e-8f}, 1, 3);
        Tensor hostLeaf = Tensor.zeros(1, 2).requiresGrad(true);
        hostLeaf.gather(1, three).mul(g).sum().backward();
        Tensor deviceLeaf = Tensor.zeros(1, 2).to(dev()).requiresGrad(true);
        deviceLeaf.gather(1, three.to(dev())).mul(g.to(dev())).sum().backward();
        assertArrayEquals(hostLeaf.grad().toFloatArray(), deviceLeaf.grad().cpu().toFloatArray(),
                "the same float32 sums, each addition rounded");
        Tensor half = random(41, 4, 5).to(DType.FLOAT16);
        Tensor idx = Tensor.of(new long[] {0, 2, 2, 1, 1, 1, 0, 0, 2, 2, 0, 1}, 4, 3);
        Tensor hostHalf = half.clone().requiresGrad(true);
        hostHalf.gather(1, idx).to(DType.FLOAT32).sum().backward();
        Tensor deviceHalf = half.to(dev()).requiresGrad(true);
        deviceHalf.gather(1, idx.to(dev())).to(DType.FLOAT32).sum().backward();
        assertEquals(DType.FLOAT16, deviceHalf.grad().dtype());
        assertArrayEquals(hostHalf.grad().toFloatArray(), deviceHalf.grad().cpu().toFloatArray(), "float16 gradient");
    }

    /** {@code index} where the case's first input lives. */
    private static Tensor near(Tensor index, List<Tensor> inputs) {
        return index.to(inputs.get(0).device());
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
