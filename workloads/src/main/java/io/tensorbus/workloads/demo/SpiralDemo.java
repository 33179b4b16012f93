package io.tensorbus.workloads.demo;

import io.tensorbus.autograd.Autograd;
import io.tensorbus.nn.Functional;
import io.tensorbus.spi.DType;
import io.tensorbus.tensor.Generator;
import io.tensorbus.tensor.Tensor;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The local training demo: a two-layer network learns to tell apart three interleaved spirals (a classic
 * non-linear toy problem) with mini-batch SGD and momentum, written directly against tensors, autograd and
 * {@link Functional}. It needs no download; DDP Fashion-MNIST training replaces it as the main job later.
 */
public final class SpiralDemo {
    private static final int CLASSES = 3;

    private final int epochs;
    private final int hidden;
    private final int batch;
    private final double lr;
    private final double momentum;
    private final Generator gen;

    /**
     * @param epochs passes over the 3000 training points, at least 1
     * @param seed seed of the data and of the initial weights
     * @throws IllegalArgumentException when {@code epochs < 1}
     */
    public SpiralDemo(int epochs, long seed) {
        if (epochs < 1) {
            throw new IllegalArgumentException("epochs must be >= 1, got " + epochs);
        }
        this.epochs = epochs;
        this.hidden = 64;
        this.batch = 100;
        this.lr = 0.1;
        this.momentum = 0.9;
        this.gen = new Generator(seed);
    }

    /** The points and labels of {@code n} spiral points per class, with a little noise. */
    Tensor[] spirals(int n) {
        float[] xy = new float[n * CLASSES * 2];
        long[] labels = new long[n * CLASSES];
        for (int c = 0; c < CLASSES; c++) {
            for (int i = 0; i < n; i++) {
                double r = (double) i / n;
                double theta = c * 2 * Math.PI / CLASSES + r * 4 + gen.nextGaussian() * 0.2;
                int k = c * n + i;
                xy[2 * k] = (float) (r * Math.sin(theta));
                xy[2 * k + 1] = (float) (r * Math.cos(theta));
                labels[k] = c;
            }
        }
        return new Tensor[] {Tensor.of(xy, n * CLASSES, 2), Tensor.of(labels)};
    }

    /**
     * Trains and returns the test accuracy in [0, 1], printing the loss of each epoch to {@code out}.
     */
    public double train(PrintStream out) {
        Tensor[] train = spirals(1000);
        Tensor[] test = spirals(300);
        double b1 = 1 / Math.sqrt(2);
        double b2 = 1 / Math.sqrt(hidden);
        List<Tensor> params = List.of(
                uniform(b1, hidden, 2), uniform(b1, hidden),
                uniform(b2, CLASSES, hidden), uniform(b2, CLASSES));
        List<Tensor> velocity = new ArrayList<>();
        for (Tensor p : params) {
            p.requiresGrad(true);
            velocity.add(Tensor.zerosLike(p));
        }
        int n = train[0].size(0);
        for (int epoch = 1; epoch <= epochs; epoch++) {
            Tensor perm = Tensor.randperm(gen, n);
            double total = 0;
            for (int s = 0; s < n; s += batch) {
                Tensor idx = perm.narrow(0, s, Math.min(batch, n - s));
                Tensor loss = Functional.crossEntropy(forward(params, train[0].indexSelect(0, idx)),
                        train[1].indexSelect(0, idx));
                loss.backward();
                step(params, velocity);
                total += loss.item() * idx.size(0);
            }
            out.printf(Locale.ROOT, "epoch %d/%d  loss %.4f%n", epoch, epochs, total / n);
        }
        double acc = accuracy(params, test);
        out.printf(Locale.ROOT, "test accuracy %.1f%% (%d points, %d classes)%n", acc * 100, test[0].size(0), CLASSES);
        return acc;
    }

    private Tensor uniform(double bound, int... shape) {
        return Tensor.rand(gen, DType.FLOAT32, shape).mul(2 * bound).sub(bound);
    }

    private static Tensor forward(List<Tensor> p, Tensor x) {
        Tensor h = Functional.linear(x, p.get(0), p.get(1)).relu();
        return Functional.linear(h, p.get(2), p.get(3));
    }

    private void step(List<Tensor> params, List<Tensor> velocity) {
        try (var ignored = Autograd.noGrad()) {
            for (int i = 0; i < params.size(); i++) {
                Tensor p = params.get(i);
                velocity.get(i).muli(momentum).addi(p.grad());
                p.addi(velocity.get(i), -lr);
                p.setGrad(null);
            }
        }
    }

    private static double accuracy(List<Tensor> params, Tensor[] data) {
        try (var ignored = Autograd.noGrad()) {
            Tensor pred = forward(params, data[0]).argmax(1, false);
            return pred.eq(data[1]).to(DType.FLOAT32).mean().item();
        }
    }

    /** Runs the demo: {@code [--epochs N] [--seed S]}. */
    public static void main(String[] args) {
        int epochs = 20;
        long seed = 0;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--epochs" -> epochs = Integer.parseInt(value(args, ++i, "--epochs"));
                case "--seed" -> seed = Long.parseLong(value(args, ++i, "--seed"));
                default -> throw new IllegalArgumentException("unknown option " + args[i]
                        + "; usage: local-demo [--epochs N] [--seed S]");
            }
        }
        System.out.println("tensorbus local demo: a 2-64-3 network learns three spirals with SGD (momentum 0.9)");
        new SpiralDemo(epochs, seed).train(System.out);
    }

    private static String value(String[] args, int i, String name) {
        if (i >= args.length) {
            throw new IllegalArgumentException(name + " needs a value");
        }
        return args[i];
    }
}
