package io.tensorbus.workloads.bench;

import io.tensorbus.DType;
import io.tensorbus.Device;
import io.tensorbus.nn.Functional;
import io.tensorbus.nn.models.MnistNet;
import io.tensorbus.nn.models.ResNet;
import io.tensorbus.optim.SGD;
import io.tensorbus.tensor.Generator;
import io.tensorbus.tensor.Tensor;
import io.tensorbus.tensor.Threads;
import io.tensorbus.workloads.demo.FashionMnistTraining;
import java.io.PrintStream;
import java.util.Objects;
import java.util.function.Consumer;
import java.util.function.IntSupplier;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/**
 * The {@code nn} suite, the shapes of {@code tools/anchors/torch_compute.py} and {@code torch_ddp.py 1}:
 * ResNet-50 forward+backward images/s in training mode at batch 8, 64x64 and 128x128, on one thread and on
 * all threads; and a training step (forward, backward, SGD) of the tutorial network at batch 128.
 */
public final class NnBench {
    private static final int[] IMAGE_SIDES = {64, 128};
    private static final int RESNET_BATCH = 8;
    private static final int TUTORIAL_BATCH = 128;

    private final Timing timing;
    private final Device device;

    /** A suite with the given timing, on the host. */
    public NnBench(Timing timing) {
        this(timing, Device.CPU);
    }

    /** A suite with the given timing on {@code device}: the host's threads then only feed it. */
    public NnBench(Timing timing, Device device) {
        this.timing = timing;
        this.device = Objects.requireNonNull(device, "device");
    }

    /** A suite with a short warm-up (ResNet-50 steps take seconds) and the median of 3 samples. */
    public NnBench() {
        this(new Timing(3.0, 3, 0.05));
    }

    /** Runs every measurement, handing each to {@code sink}, and restores the thread count. */
    public void run(Consumer<Measurement> sink) {
        if (!device.isCpu()) {
            sink.accept(tutorialNet(Threads.get()));
            for (int side : IMAGE_SIDES) {
                sink.accept(resnet50(Threads.get(), side));
            }
            return;
        }
        int before = Threads.get();
        int all = Runtime.getRuntime().availableProcessors();
        try {
            for (int threads : all > 1 ? new int[] {1, all} : new int[] {1}) {
                Threads.set(threads);
                sink.accept(tutorialNet(threads));
                for (int side : IMAGE_SIDES) {
                    sink.accept(resnet50(threads, side));
                }
            }
        } finally {
            Threads.set(before);
        }
    }

    /** ResNet-50 (1000 classes) forward, {@code sum()}, backward, in training mode; images/s. */
    Measurement resnet50(int threads, int side) {
        ResNet model = ResNet.resnet50(1000, new Generator(0));
        model.to(device);
        Tensor x = Tensor.randn(new Generator(1), DType.FLOAT32, RESNET_BATCH, 3, side, side).to(device);
        double s = timing.medianSeconds(() -> {
            model.zeroGrad(true);
            model.forward(x).sum().backward();
        });
        return on(new Measurement("nn", "resnet50")).with("threads", threads).with("batch", RESNET_BATCH)
                .with("img", side).with("images_per_s", RESNET_BATCH / s, 2);
    }

    /** One SGD training step (lr 0.01, momentum 0.5) of the tutorial network on random 28x28 data. */
    Measurement tutorialNet(int threads) {
        MnistNet model = new MnistNet(new Generator(1234));
        model.to(device);
        SGD sgd = SGD.builder().lr(0.01).momentum(0.5).build(model.parameters());
        Tensor x = Tensor.randn(new Generator(2), DType.FLOAT32, TUTORIAL_BATCH, 1, 28, 28).to(device);
        Tensor y = Tensor.randint(new Generator(3), 0, 10, TUTORIAL_BATCH).to(device);
        double s = timing.medianSeconds(() -> {
            sgd.zeroGrad(true);
            Functional.nllLoss(model.forward(x), y).backward();
            sgd.step();
        });
        return on(new Measurement("nn", "tutorial_net")).with("threads", threads).with("batch", TUTORIAL_BATCH)
                .with("step_ms", s * 1000, 2).with("samples_per_s", TUTORIAL_BATCH / s, 0);
    }

    /** {@code m} naming the device, when it is not the host. */
    private Measurement on(Measurement m) {
        return device.isCpu() ? m : m.with("device", device.toString());
    }

    /** {@code tensorbus bench nn}. */
    @Command(name = "nn", description = "ResNet-50 training images/s at batch 8 and a training step of the tutorial"
            + " network, on one compute thread and on all (or on --device)")
    public static final class Suite extends BenchSuite {
        @Mixin
        FashionMnistTraining.DeviceFlag device = new FashionMnistTraining.DeviceFlag();

        @Override
        protected IntSupplier suite(Consumer<Measurement> sink, PrintStream err) {
            Device on = FashionMnistTraining.placed(device.device(), 0);
            return () -> {
                new NnBench(new Timing(3.0, 3, 0.05), on).run(sink);
                return 0;
            };
        }
    }
}
