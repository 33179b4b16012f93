package io.tensorbus.nn.models;

import io.tensorbus.nn.BatchNorm2d;
import io.tensorbus.nn.Conv2d;
import io.tensorbus.nn.Module;
import io.tensorbus.tensor.Generator;
import io.tensorbus.tensor.Tensor;

/** torchvision's ResNet basic block: two 3x3 convolutions with batch norm, plus the (downsampled) input. */
public final class BasicBlock extends Module {
    /** Output channels per {@code planes}. */
    public static final int EXPANSION = 1;

    private final Conv2d conv1;
    private final BatchNorm2d bn1;
    private final Conv2d conv2;
    private final BatchNorm2d bn2;
    private final Module downsample;

    /**
     * @param downsample what maps the input to the output's shape when they differ, or null
     */
    public BasicBlock(int inplanes, int planes, int stride, Module downsample, Generator generator) {
        this.conv1 = registerModule("conv1", ResNet.conv3x3(inplanes, planes, stride, generator));
        this.bn1 = registerModule("bn1", new BatchNorm2d(planes));
        this.conv2 = registerModule("conv2", ResNet.conv3x3(planes, planes, 1, generator));
        this.bn2 = registerModule("bn2", new BatchNorm2d(planes));
        this.downsample = downsample == null ? null : registerModule("downsample", downsample);
    }

    @Override
    public Tensor forward(Tensor x) {
        Tensor out = bn1.forward(conv1.forward(x)).relu();
        out = bn2.forward(conv2.forward(out));
        Tensor identity = downsample == null ? x : downsample.forward(x);
        return out.add(identity).relu();
    }
}
