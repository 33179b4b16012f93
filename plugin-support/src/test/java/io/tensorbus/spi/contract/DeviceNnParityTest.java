package io.tensorbus.spi.contract;

import static io.tensorbus.spi.contract.DeviceParity.assertClose;
import static io.tensorbus.spi.contract.DeviceParity.random;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tensorbus.DType;
import io.tensorbus.Device;
import io.tensorbus.data.FashionMnist;
import io.tensorbus.io.SafeTensors;
import io.tensorbus.nn.Functional;
import io.tensorbus.nn.Reduction;
import io.tensorbus.nn.models.MnistNet;
import io.tensorbus.nn.models.ResNet;
import io.tensorbus.optim.Adam;
import io.tensorbus.optim.AdamW;
import io.tensorbus.optim.Optimizer;
import io.tensorbus.optim.SGD;
import io.tensorbus.tensor.Generator;
import io.tensorbus.tensor.Tensor;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The layers, losses and optimizers of a training step give on the suite's device what they give on the host, and
 * the tutorial's network trains there with the host's losses.
 */
@Timeout(value = 600, unit = TimeUnit.SECONDS)
public abstract class DeviceNnParityTest extends DeviceSuite {

    private void parity(String what, Function<List<Tensor>, Tensor> f, Tensor... inputs) {
        DeviceParity.check(dev(), what, f, inputs);
    }

    @Test
    void convolutionsWithStridesPaddingAndDilationMatchTheHost() {
        Tensor x = random(1, 3, 4, 11, 9);
        parity("conv 5x5", t -> Functional.conv2d(t.get(0), t.get(1), t.get(2), 1, 0), x, random(2, 6, 4, 5, 5),
                random(3, 6));
        parity("conv 3x3 stride 2 pad 1 no bias", t -> Functional.conv2d(t.get(0), t.get(1), null, 2, 1), x,
                random(4, 5, 4, 3, 3));
        parity("conv 3x2 dilated", t -> Functional.conv2d(t.get(0), t.get(1), t.get(2), new int[] {1, 2},
                new int[] {2, 1}, new int[] {2, 1}, 1), x, random(5, 2, 4, 3, 2), random(6, 2));
        parity("conv 1x1", t -> Functional.conv2d(t.get(0), t.get(1), t.get(2), 1, 0), x, random(7, 8, 4, 1, 1),
                random(8, 8));
        parity("conv in 2 groups with a bias", t -> Functional.conv2d(t.get(0), t.get(1), t.get(2),
                new int[] {2, 1}, new int[] {1, 0}, new int[] {1, 1}, 2), x, random(9, 6, 2, 3, 3), random(17, 6));
        parity("depthwise conv", t -> Functional.conv2d(t.get(0), t.get(1), null, new int[] {1, 1},
                new int[] {1, 1}, new int[] {1, 1}, 4), x, random(18, 4, 1, 3, 3));
    }

    @Test
    void poolingMatchesTheHostForwardAndBackward() {
        Tensor x = random(10, 2, 3, 13, 10);
        parity("max 2x2", t -> Functional.maxPool2d(t.get(0), 2), x);
        parity("max 3x3 stride 2 pad 1 ceil", t -> Functional.maxPool2d(t.get(0), new int[] {3, 3},
                new int[] {2, 2}, new int[] {1, 1}, true), x);
        parity("avg 3x3 stride 2 pad 1 counting padding", t -> Functional.avgPool2d(t.get(0), new int[] {3, 3},
                new int[] {2, 2}, new int[] {1, 1}, false, true), x);
        parity("avg 2x2", t -> Functional.avgPool2d(t.get(0), 2), x);
        parity("adaptive avg to 3x4", t -> Functional.adaptiveAvgPool2d(t.get(0), 3, 4), x);
        parity("adaptive avg to 1x1", t -> Functional.adaptiveAvgPool2d(t.get(0), 1, 1), x);
    }

    @Test
    void lossesAndDropoutMatchTheHost() {
        Tensor logits = random(11, 7, 5);
        Tensor target = Tensor.of(new long[] {0, 4, 2, 2, 1, 3, 0}, 7);
        parity("nll mean", t -> Functional.nllLoss(t.get(0).logSoftmax(1), target), logits);
        parity("nll sum with weights and an ignored class", t -> Functional.nllLoss(t.get(0).logSoftmax(1), target,
                Tensor.of(new float[] {1, 2, 0.5f, 1, 3}, 5), 2, Reduction.SUM), logits);
        parity("nll none", t -> Functional.nllLoss(t.get(0).logSoftmax(1), target, null, -100, Reduction.NONE),
                logits);
        parity("cross entropy", t -> Functional.crossEntropy(t.get(0), target), logits);
        parity("dropout", t -> Functional.dropout(t.get(0), 0.4, true, new Generator(5)), random(12, 6, 9));
        parity("dropout2d", t -> Functional.dropout2d(t.get(0), 0.5, true, new Generator(6)), random(13, 2, 4, 3, 3));
    }

    @Test
    void dropoutDrawsTheHostsMasksOnTheDeviceAndMovesTheGeneratorAlike() {
        Generator onHost = new Generator(21);
        Generator onDevice = new Generator(21);
        for (DType dtype : new DType[] {DType.FLOAT32, DType.FLOAT64, DType.FLOAT32}) {
            Tensor x = Tensor.ones(dtype, 1001, 7);
            Tensor host = Functional.dropout(x, 0.3, true, onHost);
            Tensor device = Functional.dropout(x.to(dev()), 0.3, true, onDevice);
            assertEquals(dev(), device.device());
            assertArrayEquals(host.toDoubleArray(), device.cpu().toDoubleArray(), dtype + " mask");
            assertEquals(0.7, host.gt(0.0).to(DType.FLOAT64).mean().item(), 0.02, "kept share");
        }
        assertEquals(onHost.offset(), onDevice.offset());
    }

    @Test
    void batchNormTrainsAndEvaluatesAsOnTheHostWithTheSameRunningStatistics() {
        Tensor x = random(14, 5, 3, 4, 6).mul(2).add(1);
        Tensor hostMean = Tensor.zeros(3);
        Tensor hostVar = Tensor.ones(3);
        Tensor deviceMean = Tensor.zeros(3).to(dev());
        Tensor deviceVar = Tensor.ones(3).to(dev());
        parity("batch norm in training", t -> Functional.batchNorm(t.get(0), t.get(0).device().isCpu() ? hostMean
                : deviceMean, t.get(0).device().isCpu() ? hostVar : deviceVar, t.get(1), t.get(2), true, 0.1, 1e-5),
                x, random(15, 3), random(16, 3));
        assertClose(hostMean, deviceMean.cpu(), "running mean");
        assertClose(hostVar, deviceVar.cpu(), "running variance");
        parity("batch norm in evaluation", t -> Functional.batchNorm(t.get(0), t.get(0).device().isCpu() ? hostMean
                : deviceMean, t.get(0).device().isCpu() ? hostVar : deviceVar, t.get(1), null, false, 0.1, 1e-5),
                x, random(17, 3));
    }

    @Test
    void resNet18ForwardAndBackwardOnTheDeviceEqualTheHosts() {
        ResNet host = ResNet.resnet18(10, new Generator(3));
        ResNet device = ResNet.resnet18(10, new Generator(3));
        device.to(dev());
        // 64x64 keeps 2x2 planes in the last stage: batch norm over fewer values per channel turns last-bit
        // differences of nearly equal activations into large ones, on any two correct implementations.
        Tensor x = random(18, 4, 3, 64, 64);
        Tensor hostOut = host.forward(x);
        Tensor deviceOut = device.forward(x.to(dev()));
        assertClose(hostOut, deviceOut.cpu(), 1e-4, "ResNet-18 logits");
        Tensor target = Tensor.of(new long[] {3, 7, 0, 9}, 4);
        Functional.crossEntropy(hostOut, target).backward();
        Functional.crossEntropy(deviceOut, target.to(dev())).backward();
        Map<String, Tensor> hp = host.namedParameters();
        for (Map.Entry<String, Tensor> e : device.namedParameters().entrySet()) {
            assertClose(hp.get(e.getKey()).grad(), e.getValue().grad().cpu(), 1e-4, "gradient of " + e.getKey());
        }
        Map<String, Tensor> hb = host.stateDict();
        for (Map.Entry<String, Tensor> e : device.stateDict().entrySet()) {
            assertClose(hb.get(e.getKey()).detach(), e.getValue().detach().cpu(), 1e-4, e.getKey());
        }
    }

    @Test
    void moduleToMovesParametersInPlaceAndTheStateDictComesBackToTheHost() {
        MnistNet net = new MnistNet(new Generator(1));
        Tensor weight = net.namedParameters().get("conv1.weight");
        Tensor before = weight.detach().clone();
        assertEquals(Device.CPU, net.device());
        assertSame(net, net.to(dev()));
        assertSame(weight, net.namedParameters().get("conv1.weight"), "the parameter object is kept");
        assertEquals(dev(), weight.device());
        assertEquals(dev(), net.device());
        assertTrue(weight.requiresGrad());
        assertClose(before, weight.detach().cpu(), "moved values");
        MnistNet host = new MnistNet(new Generator(2));
        Map<String, Tensor> state = net.stateDict();
        for (Map.Entry<String, Tensor> e : state.entrySet()) {
            assertEquals(dev(), e.getValue().device(), e.getKey());
        }
        host.loadStateDict(state, true);
        assertClose(before, host.namedParameters().get("conv1.weight").detach(), "loaded onto the host");
        MnistNet back = new MnistNet(new Generator(3));
        back.to(dev()).loadStateDict(new MnistNet(new Generator(1)).stateDict(), true);
        assertClose(before, back.namedParameters().get("conv1.weight").detach().cpu(), "loaded onto the device");
    }

    @Test
    void aCheckpointSavedOnTheDeviceResumesOnTheHostAndBack(@TempDir Path dir) throws Exception {
        MnistNet net = new MnistNet(new Generator(4));
        net.to(dev());
        Optimizer sgd = SGD.builder().lr(0.1).momentum(0.9).build(net.parameters());
        FashionMnist data = FashionMnist.embedded(true);
        Functional.nllLoss(net.forward(data.images().narrow(0, 0, 8).to(dev())),
                data.labels().narrow(0, 0, 8).to(dev())).backward();
        sgd.step();
        Path file = dir.resolve("model.safetensors");
        SafeTensors.save(file, net.stateDict());
        MnistNet host = new MnistNet(new Generator(5));
        host.loadStateDict(SafeTensors.load(file), true);
        net.stateDict().forEach((k, v) -> assertClose(v.detach().cpu(), host.stateDict().get(k).detach(), k));
        Optimizer hostSgd = SGD.builder().lr(0.1).momentum(0.9).build(host.parameters());
        hostSgd.loadStateDict(sgd.stateDict());
        MnistNet again = new MnistNet(new Generator(6));
        again.to(dev()).loadStateDict(SafeTensors.load(file), true);
        Optimizer deviceSgd = SGD.builder().lr(0.1).momentum(0.9).build(again.parameters());
        deviceSgd.loadStateDict(hostSgd.stateDict());
        for (Map<String, Tensor> s : deviceSgd.stateDict().state().values()) {
            s.forEach((k, v) -> assertEquals(dev(), v.device(), "the momentum follows its parameter: " + k));
        }
        Tensor x = data.images().narrow(0, 8, 8);
        Tensor y = data.labels().narrow(0, 8, 8);
        host.eval();
        again.eval();
        for (var pair : List.of(List.of(host, hostSgd), List.of(again, deviceSgd))) {
            MnistNet m = (MnistNet) pair.get(0);
            Optimizer o = (Optimizer) pair.get(1);
            o.zeroGrad();
            Device d = m.parameters().getFirst().device();
            Functional.nllLoss(m.forward(x.to(d)), y.to(d)).backward();
            o.step();
        }
        host.stateDict().forEach((k, v) -> assertClose(v.detach(), again.stateDict().get(k).detach().cpu(), k
                + " after a step resumed on each side"));
    }

    @Test
    void mnistNetTrainsThirtyStepsOnTheDeviceWithTheHostsLosses() {
        double[] host = trainMnistNet(Device.CPU, SGD.builder().lr(0.05).momentum(0.5));
        double[] device = trainMnistNet(dev(), SGD.builder().lr(0.05).momentum(0.5));
        for (int step = 0; step < host.length; step++) {
            assertEquals(host[step], device[step], 1e-4 * Math.abs(host[step]), "loss at step " + step);
        }
        assertTrue(host[host.length - 1] < host[0], "the network learns: " + host[0] + " -> " + host[host.length - 1]);
    }

    @Test
    void optimizerStepsOfEveryKindEqualTheHostsWithTheirStateOnTheDevice() {
        List<Optimizer.Builder<?, ?>> kinds = List.of(SGD.builder().lr(0.1), SGD.builder().lr(0.1).momentum(0.9)
                .dampening(0.1).weightDecay(0.01), SGD.builder().lr(0.1).momentum(0.9).nesterov(true),
                Adam.builder().lr(0.01).weightDecay(0.01), AdamW.builder().lr(0.01), Adam.builder().lr(0.01)
                        .amsgrad(true));
        for (Optimizer.Builder<?, ?> kind : kinds) {
            Tensor hostParam = random(40, 7, 13).requiresGrad(true);
            Tensor deviceParam = hostParam.detach().to(dev()).requiresGrad(true);
            Optimizer onHost = kind.build(List.of(hostParam));
            Optimizer onDevice = kind.build(List.of(deviceParam));
            for (int step = 0; step < 5; step++) {
                Tensor grad = random(41 + step, 7, 13);
                hostParam.setGrad(grad);
                deviceParam.setGrad(grad.to(dev()));
                onHost.step();
                onDevice.step();
            }
            String what = onHost.getClass().getSimpleName() + " " + onHost.stateDict().paramGroups();
            assertClose(hostParam.detach(), deviceParam.detach().cpu(), 1e-6, what);
            Map<String, Tensor> hostState = onHost.stateDict().state().getOrDefault(0, Map.of());
            assertEquals(hostState.keySet(), onDevice.stateDict().state().getOrDefault(0, Map.of()).keySet(), what);
            onDevice.stateDict().state().getOrDefault(0, Map.of()).forEach((key, t) -> {
                assertEquals(key.equals("step") ? Device.CPU : dev(), t.device(), what + ": state " + key);
                assertClose(hostState.get(key), t.cpu(), 1e-6, what + ": state " + key);
            });
        }
    }

    @Test
    void adamStepsOnTheDeviceEqualTheHosts() {
        double[] host = trainMnistNet(Device.CPU, Adam.builder().lr(1e-3).weightDecay(1e-4));
        double[] device = trainMnistNet(dev(), Adam.builder().lr(1e-3).weightDecay(1e-4));
        for (int step = 0; step < host.length; step++) {
            assertEquals(host[step], device[step], 1e-4 * Math.abs(host[step]), "loss at step " + step);
        }
    }

    private double[] trainMnistNet(Device device, Optimizer.Builder<?, ?> optimizer) {
        MnistNet net = new MnistNet(new Generator(42));
        net.to(device);
        net.train();
        Optimizer opt = optimizer.build(net.parameters());
        FashionMnist data = FashionMnist.embedded(true);
        double[] losses = new double[30];
        for (int step = 0; step < losses.length; step++) {
            Tensor x = data.images().narrow(0, step * 32, 32).to(device);
            Tensor y = data.labels().narrow(0, step * 32, 32).to(device);
            opt.zeroGrad();
            Tensor loss = Functional.nllLoss(net.forward(x), y);
            losses[step] = loss.item();
            loss.backward();
            opt.step();
        }
        return losses;
    }
}
