package io.tensorbus.workloads.ddp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tensorbus.Device;
import io.tensorbus.data.FashionMnist;
import io.tensorbus.distributed.Distributed;
import io.tensorbus.distributed.optim.OptimizerSpec;
import io.tensorbus.distributed.optim.ZeroRedundancyOptimizer;
import io.tensorbus.nn.Functional;
import io.tensorbus.nn.models.MnistNet;
import io.tensorbus.optim.Optimizer;
import io.tensorbus.optim.SGD;
import io.tensorbus.parallel.DistributedDataParallel;
import io.tensorbus.spi.DeviceRuntimeProvider;
import io.tensorbus.tensor.Generator;
import io.tensorbus.tensor.Tensor;
import io.tensorbus.workloads.demo.FashionMnistTraining;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The main job on an OpenCL device over the opencl backend trains as it does on the host over tcp. */
class DdpOnDeviceTest {
    private static final Device CL0 = Device.opencl(0);

    private static void assumeOpenCl() {
        DeviceRuntimeProvider cl = DeviceRuntimeProvider.all().stream().filter(p -> p.type().equals("opencl"))
                .findFirst().orElseThrow();
        if (!cl.isAvailable()) {
            String why = "DDP on an OpenCL device skipped: " + cl.unavailabilityCause().getMessage();
            System.err.println("[tensorbus] " + why);
            Assumptions.abort(why);
        }
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void objectCollectivesOnADeviceBackendGoThroughTheBoundDeviceOrSayHowToBindOne() {
        assumeOpenCl();
        Map<Integer, Object> seen = new ConcurrentHashMap<>();
        Distributed.spawn(2, Duration.ofSeconds(50), b -> b.backend("opencl").deviceId(CL0),
                pg -> seen.put(pg.rank(), pg.allGatherObject("rank " + pg.rank()).await()));
        assertEquals(List.of("rank 0", "rank 1"), seen.get(1));
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> Distributed.spawn(1,
                Duration.ofSeconds(50), b -> b.backend("opencl"), pg -> pg.allGatherObject("x").await()));
        assertTrue(String.valueOf(e.getCause()).contains("deviceId") || e.getMessage().contains("deviceId"),
                String.valueOf(e.getCause()));
    }

    @Test
    @Timeout(value = 240, unit = TimeUnit.SECONDS)
    void twoRanksOnOneOpenClDeviceTrainAsTwoRanksOnTheHost() {
        assumeOpenCl();
        FashionMnistTraining.Options host = new FashionMnistTraining.Options(1, null, 1234, 128, 0.01, 0.5, 1024);
        Map<Integer, DdpFashionMnistTraining.Result> onHost = train(host, "tcp");
        Map<Integer, DdpFashionMnistTraining.Result> onDevice = train(host.onDevice(CL0), "opencl");
        DdpFashionMnistTraining.Result h = onHost.get(0);
        DdpFashionMnistTraining.Result d = onDevice.get(0);
        assertEquals(h.lastLoss(), d.lastLoss(), 1e-4 * h.lastLoss(), "the epoch's mean loss");
        assertEquals(h.accuracy(), d.accuracy(), 0.01, "test accuracy within 1 point");
        Map<String, Tensor> hp = h.model().namedParameters();
        d.model().namedParameters().forEach((name, p) -> {
            assertEquals(CL0, p.device(), name + " trained on the device");
            double diff = p.cpu().sub(hp.get(name)).abs().max().item();
            assertTrue(diff < 1e-4, name + " differs from the host run by " + diff);
        });
        Map<String, Tensor> p1 = onDevice.get(1).model().namedParameters();
        d.model().namedParameters().forEach((name, p) -> assertEquals(0.0, p.sub(p1.get(name)).abs().max().item(),
                name + " differs between the ranks"));
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"fp16", "bf16", "powersgd"})
    @Timeout(value = 240, unit = TimeUnit.SECONDS)
    void communicationHooksCompressDeviceGradientsAsHostOnes(String hook) {
        assumeOpenCl();
        FashionMnistTraining.Options host = new FashionMnistTraining.Options(1, null, 1234, 128, 0.01, 0.5, 512);
        CommHookChoice choice = new CommHookChoice(hook, 1, 2);
        DdpFashionMnistTraining.Result h = train(host, "tcp", choice).get(0);
        DdpFashionMnistTraining.Result d = train(host.onDevice(CL0), "opencl", choice).get(0);
        assertEquals(h.lastLoss(), d.lastLoss(), 1e-4 * h.lastLoss(), hook + ": the epoch's mean loss");
        Map<String, Tensor> hp = h.model().namedParameters();
        d.model().namedParameters().forEach((name, p) -> {
            double diff = p.cpu().sub(hp.get(name)).abs().max().item();
            assertTrue(diff < 1e-3, hook + ": " + name + " differs from the host run by " + diff);
        });
    }

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void zeroShardsAdamStateOfDeviceParametersAndEndsAsTheHost() {
        assumeOpenCl();
        Map<String, Tensor> host = threeSteps(Device.CPU, "tcp", false, true);
        Map<String, Tensor> device = threeSteps(CL0, "opencl", false, true);
        assertSameParameters(host, device, 1e-5);
    }

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void gradientsAsViewsOfDeviceBucketsStepAsHostGradients() {
        assumeOpenCl();
        Map<String, Tensor> host = threeSteps(Device.CPU, "tcp", false, false);
        Map<String, Tensor> device = threeSteps(CL0, "opencl", true, false);
        assertSameParameters(host, device, 1e-5);
    }

    private static void assertSameParameters(Map<String, Tensor> host, Map<String, Tensor> device, double tolerance) {
        device.forEach((name, p) -> {
            assertEquals(CL0, p.device(), name);
            double diff = p.cpu().sub(host.get(name)).abs().max().item();
            assertTrue(diff < tolerance, name + " differs from the host run by " + diff);
        });
    }

    /**
     * Three DDP steps of the tutorial network on two thread ranks, with ZeRO(Adam) or SGD with momentum, and
     * gradients as bucket views or not; rank 0's parameters.
     */
    private static Map<String, Tensor> threeSteps(Device device, String backend, boolean bucketView, boolean zero) {
        FashionMnist data = FashionMnist.embedded(true);
        Map<Integer, Map<String, Tensor>> out = new ConcurrentHashMap<>();
        Distributed.spawn(2, Duration.ofSeconds(100), b -> device.isCpu() ? b.backend(backend)
                : b.backend(backend).deviceId(device), pg -> {
                    MnistNet net = new MnistNet(new Generator(1));
                    net.to(device);
                    net.eval(); // no dropout: the ranks' batches differ, their masks need not
                    DistributedDataParallel ddp = DistributedDataParallel.builder(net, pg)
                            .gradientAsBucketView(bucketView).bucketCapMb(0.01).build();
                    List<Tensor> params = ddp.parameters();
                    ZeroRedundancyOptimizer sharded = zero ? ZeroRedundancyOptimizer.builder(OptimizerSpec.adam(1e-3))
                            .group(pg).build(params) : null;
                    Optimizer sgd = zero ? null : SGD.builder().lr(0.05).momentum(0.9).build(params);
                    for (int step = 0; step < 3; step++) {
                        int at = (step * 2 + pg.rank()) * 16;
                        Tensor x = data.images().narrow(0, at, 16).to(device);
                        Tensor y = data.labels().narrow(0, at, 16).to(device);
                        if (zero) {
                            sharded.zeroGrad();
                        } else {
                            sgd.zeroGrad();
                        }
                        Functional.nllLoss(ddp.forward(x), y).backward();
                        if (bucketView) {
                            Tensor g = params.get(0).grad();
                            assertTrue(g.base() != null && g.base().device().equals(device),
                                    "the gradient is a view of its bucket on " + device + ": " + g.base());
                        }
                        if (zero) {
                            sharded.step();
                        } else {
                            sgd.step();
                        }
                    }
                    out.put(pg.rank(), net.namedParameters());
                });
        return out.get(0);
    }

    private static Map<Integer, DdpFashionMnistTraining.Result> train(FashionMnistTraining.Options o,
            String backend) {
        return train(o, backend, CommHookChoice.allReduce());
    }

    private static Map<Integer, DdpFashionMnistTraining.Result> train(FashionMnistTraining.Options o,
            String backend, CommHookChoice hook) {
        Map<Integer, DdpFashionMnistTraining.Result> results = new ConcurrentHashMap<>();
        Distributed.spawn(2, Duration.ofSeconds(200), b -> o.device().isCpu() ? b.backend(backend)
                : b.backend(backend).deviceId(o.device()), pg -> results.put(pg.rank(),
                new DdpFashionMnistTraining(o, hook, null).run(pg, new PrintStream(new ByteArrayOutputStream(), true,
                        StandardCharsets.UTF_8))));
        return results;
    }
}
