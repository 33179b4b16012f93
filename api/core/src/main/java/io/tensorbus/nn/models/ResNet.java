package io.tensorbus.nn.models;

import io.tensorbus.internal.tensor.Shapes;
import io.tensorbus.nn.AdaptiveAvgPool2d;
import io.tensorbus.nn.BatchNorm2d;
import io.tensorbus.nn.Conv2d;
import io.tensorbus.nn.Flatten;
import io.tensorbus.nn.Init;
import io.tensorbus.nn.Linear;
import io.tensorbus.nn.MaxPool2d;
import io.tensorbus.nn.Module;
import io.tensorbus.nn.ReLU;
import io.tensorbus.nn.Sequential;
import io.tensorbus.tensor.Generator;
import io.tensorbus.tensor.Tensor;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * torchvision's ResNet with its parameter names and initialisation (convolutions kaiming-normal, fan-out,
 * ReLU gain; batch norm ones and zeros), so that a torchvision state dict loads unchanged. {@link #resnet50}
 * is the model of the pipeline-parallel workload.
 */
public final class ResNet extends Module {
    /** Which residual block the stages are made of. */
    public enum Block {
        /** {@link BasicBlock}: ResNet-18 and -34. */
        BASIC(BasicBlock.EXPANSION),
        /** {@link Bottleneck}: ResNet-50, -101 and -152. */
        BOTTLENECK(Bottleneck.EXPANSION);

        private final int expansion;

        Block(int expansion) {
            this.expansion = expansion;
        }
    }

    private final Block block;
    private final Generator generator;
    private int inplanes;
    private final Conv2d conv1;
    private final BatchNorm2d bn1;
    private final MaxPool2d maxpool;
    private final Sequential[] stages = new Sequential[4];
    private final AdaptiveAvgPool2d avgpool;
    private final Linear fc;

    /**
     * @param layers blocks per stage (4 values; ResNet-50 is {@code {3, 4, 6, 3}})
     * @param width channels of the stem and of the first stage's {@code planes} (64 in torchvision); smaller
     *     widths give the same architecture in miniature, for tests
     * @param generator for the initial values (the default generator when null)
     * @throws IllegalArgumentException for a bad layer list, width or class count
     */
    public ResNet(Block block, int[] layers, int numClasses, int width, Generator generator) {
        if (layers == null || layers.length != 4 || Arrays.stream(layers).anyMatch(n -> n < 1) || width < 1
                || numClasses < 1) {
            throw new IllegalArgumentException("ResNet needs 4 stage sizes >= 1, width >= 1 and numClasses >= 1, got "
                    + Arrays.toString(layers) + ", " + width + ", " + numClasses);
        }
        this.block = block;
        this.generator = generator;
        this.inplanes = width;
        this.conv1 = registerModule("conv1", new Conv2d(3, width, new int[] {7, 7}, new int[] {2, 2},
                new int[] {3, 3}, new int[] {1, 1}, 1, false, generator));
        this.bn1 = registerModule("bn1", new BatchNorm2d(width));
        this.maxpool = registerModule("maxpool", new MaxPool2d(3, 2, 1, false));
        for (int s = 0; s < 4; s++) {
            stages[s] = registerModule("layer" + (s + 1), makeStage(width << s, layers[s], s == 0 ? 1 : 2));
        }
        this.avgpool = registerModule("avgpool", new AdaptiveAvgPool2d(1, 1));
        this.fc = registerModule("fc", new Linear((width << 3) * block.expansion, numClasses, true, generator));
        for (Module m : modules()) {
            if (m instanceof Conv2d c) {
                Init.kaimingNormal(c.weight(), 0, Init.FanMode.FAN_OUT, generator);
            }
        }
    }

    /** torchvision's {@code resnet50(num_classes=1000)} layout with fresh weights. */
    public static ResNet resnet50(int numClasses, Generator generator) {
        return new ResNet(Block.BOTTLENECK, new int[] {3, 4, 6, 3}, numClasses, 64, generator);
    }

    /** torchvision's {@code resnet18}. */
    public static ResNet resnet18(int numClasses, Generator generator) {
        return new ResNet(Block.BASIC, new int[] {2, 2, 2, 2}, numClasses, 64, generator);
    }

    private Sequential makeStage(int planes, int blocks, int stride) {
        int out = planes * block.expansion;
        Module downsample = stride != 1 || inplanes != out
                ? new Sequential(conv1x1(inplanes, out, stride, generator), new BatchNorm2d(out)) : null;
        List<Module> list = new ArrayList<>();
        list.add(newBlock(inplanes, planes, stride, downsample));
        inplanes = out;
        for (int i = 1; i < blocks; i++) {
            list.add(newBlock(inplanes, planes, 1, null));
        }
        return new Sequential(list.toArray(new Module[0]));
    }

    private Module newBlock(int in, int planes, int stride, Module downsample) {
        return block == Block.BASIC ? new BasicBlock(in, planes, stride, downsample, generator)
                : new Bottleneck(in, planes, stride, downsample, generator);
    }

    static Conv2d conv3x3(int in, int out, int stride, Generator generator) {
        return new Conv2d(in, out, new int[] {3, 3}, new int[] {stride, stride}, new int[] {1, 1}, new int[] {1, 1},
                1, false, generator);
    }

    static Conv2d conv1x1(int in, int out, int stride, Generator generator) {
        return new Conv2d(in, out, new int[] {1, 1}, new int[] {stride, stride}, new int[] {0, 0}, new int[] {1, 1},
                1, false, generator);
    }

    /**
     * The first part of the model for a pipeline: the stem (conv1, bn1, ReLU, max pool) and the first
     * {@code stages} stages; with 2, the seed's {@code ResNetShard1}. Shares this model's modules.
     *
     * @throws IllegalArgumentException unless {@code stages} is 0 to 4
     */
    public Sequential head(int stages) {
        checkCut(stages);
        List<Module> parts = new ArrayList<>(List.of(conv1, bn1, new ReLU(), maxpool));
        parts.addAll(Arrays.asList(this.stages).subList(0, stages));
        return new Sequential(parts.toArray(new Module[0]));
    }

    /**
     * The rest of the model after {@link #head head(from)}: stages {@code from} to 4, average pooling,
     * flattening and the classifier; with 2, the seed's {@code ResNetShard2}. Shares this model's modules.
     *
     * @throws IllegalArgumentException unless {@code from} is 0 to 4
     */
    public Sequential tail(int from) {
        checkCut(from);
        List<Module> parts = new ArrayList<>(Arrays.asList(this.stages).subList(from, 4));
        parts.addAll(List.of(avgpool, new Flatten(1, -1), fc));
        return new Sequential(parts.toArray(new Module[0]));
    }

    private static void checkCut(int stages) {
        if (stages < 0 || stages > 4) {
            throw new IllegalArgumentException("a ResNet has 4 stages to cut between; got " + stages);
        }
    }

    /**
     * The whole model as a sequence of layers, each block of each stage a layer of its own: conv1, bn1, ReLU, max
     * pool, the blocks of layer1 to layer4, average pooling, flattening and the classifier (23 layers for ResNet50),
     * for cutting into pipeline stages anywhere between blocks. Shares this model's modules.
     */
    public Sequential sequential() {
        List<Module> parts = new ArrayList<>(List.of(conv1, bn1, new ReLU(), maxpool));
        for (Sequential stage : stages) {
            for (int i = 0; i < stage.size(); i++) {
                parts.add(stage.get(i));
            }
        }
        parts.addAll(List.of(avgpool, new Flatten(1, -1), fc));
        return new Sequential(parts.toArray(new Module[0]));
    }

    /** The stage modules {@code layer1..layer4}, for splitting the model into pipeline shards. */
    public List<Sequential> stages() {
        return List.of(stages);
    }

    @Override
    public Tensor forward(Tensor x) {
        if (x.dim() != 4 || x.size(1) != 3) {
            throw new IllegalArgumentException("ResNet: expected input [N, 3, H, W], got " + Shapes.str(x.shape()));
        }
        Tensor y = maxpool.forward(bn1.forward(conv1.forward(x)).relu());
        for (Sequential s : stages) {
            y = s.forward(y);
        }
        return fc.forward(avgpool.forward(y).flatten(1, -1));
    }
}
