"""Writes the nn parity data of tensorbus (api/core/src/test/resources/nn/) with Debian's PyTorch 1.13.

Run: /usr/bin/python3 tools/make_nn_data.py

- resnet50_w8.*: torchvision's ResNet-50 architecture (Bottleneck, [3, 4, 6, 3]) at width 8 instead of 64,
  so that weights and gradients stay small: its initial state dict, the output, cross-entropy loss and
  every parameter's gradient of a training-mode step, the state dict after it (running statistics), and
  the output, loss and gradients in eval mode with the updated statistics.
- resnet50_keys.json: the state-dict keys and shapes of the full-width torchvision resnet50, so that the
  Java model is checked to load a torchvision checkpoint unchanged.
- tutorial_net.*: the tutorial's MNIST network (conv 1->10 5x5, conv 10->20 5x5, dropout2d, fc 320->50,
  fc 50->10, log_softmax) in eval mode (dropout off): output, NLL loss and gradients.
"""
import json
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision
from torchvision.models.resnet import Bottleneck, conv1x1

import safetensors_out

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "api", "core", "src", "test", "resources", "nn")


def save_safetensors(name, tensors):
    safetensors_out.save_safetensors(OUT, name, tensors)


class NarrowResNet(nn.Module):
    """torchvision.models.ResNet with the stem width (64) as a parameter; same names and init."""

    def __init__(self, layers, num_classes, width):
        super().__init__()
        self.inplanes = width
        self.conv1 = nn.Conv2d(3, width, kernel_size=7, stride=2, padding=3, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
        self.layer1 = self._make_layer(width, layers[0], 1)
        self.layer2 = self._make_layer(width * 2, layers[1], 2)
        self.layer3 = self._make_layer(width * 4, layers[2], 2)
        self.layer4 = self._make_layer(width * 8, layers[3], 2)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(width * 8 * Bottleneck.expansion, num_classes)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")

    def _make_layer(self, planes, blocks, stride):
        out = planes * Bottleneck.expansion
        downsample = None
        if stride != 1 or self.inplanes != out:
            downsample = nn.Sequential(conv1x1(self.inplanes, out, stride), nn.BatchNorm2d(out))
        layers = [Bottleneck(self.inplanes, planes, stride, downsample)]
        self.inplanes = out
        layers += [Bottleneck(self.inplanes, planes) for _ in range(1, blocks)]
        return nn.Sequential(*layers)

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(torch.flatten(self.avgpool(x), 1))


class TutorialNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 10, kernel_size=5)
        self.conv2 = nn.Conv2d(10, 20, kernel_size=5)
        self.conv2_drop = nn.Dropout2d()
        self.fc1 = nn.Linear(320, 50)
        self.fc2 = nn.Linear(50, 10)

    def forward(self, x):
        x = F.relu(F.max_pool2d(self.conv1(x), 2))
        x = F.relu(F.max_pool2d(self.conv2_drop(self.conv2(x)), 2))
        x = x.view(-1, 320)
        x = F.relu(self.fc1(x))
        x = F.dropout(x, training=self.training)
        x = self.fc2(x)
        return F.log_softmax(x, dim=1)


def grads(model):
    return {n: p.grad for n, p in model.named_parameters()}


def resnet_case():
    torch.manual_seed(0)
    model = NarrowResNet([3, 4, 6, 3], 10, 8)
    # 4 images of 64x64 leave 4x2x2 = 16 values per channel for the last BatchNorms: with fewer, batch
    # statistics of 2 values make the gradients ill-conditioned and float32 rounding dominates.
    x = torch.randn(4, 3, 64, 64)
    target = torch.tensor([3, 7, 0, 9])
    save_safetensors("resnet50_w8_init.safetensors", model.state_dict())
    out = model(x)
    loss = F.cross_entropy(out, target)
    loss.backward()
    save_safetensors("resnet50_w8_io.safetensors", {"x": x, "target": target, "out": out, "loss": loss.reshape(1)})
    save_safetensors("resnet50_w8_grads.safetensors", grads(model))
    save_safetensors("resnet50_w8_after.safetensors", model.state_dict())
    # Inference mode: BatchNorm is then a fixed affine map, so gradients are well conditioned and can be
    # compared tightly (in training mode PyTorch's own float32 gradients differ from float64 by up to 3%).
    model.eval()
    model.zero_grad()
    out = model(x)
    loss = F.cross_entropy(out, target)
    loss.backward()
    save_safetensors("resnet50_w8_eval.safetensors", {"out": out, "loss": loss.reshape(1)})
    save_safetensors("resnet50_w8_eval_grads.safetensors", grads(model))


def keys_case():
    full = torchvision.models.resnet50()
    keys = [[k, list(v.shape)] for k, v in full.state_dict().items()]
    with open(os.path.join(OUT, "resnet50_keys.json"), "w") as f:
        json.dump(keys, f)


def tutorial_case():
    torch.manual_seed(1)
    model = TutorialNet().eval()
    x = torch.randn(4, 1, 28, 28)
    target = torch.tensor([0, 9, 4, 2])
    save_safetensors("tutorial_net_init.safetensors", model.state_dict())
    out = model(x)
    loss = F.nll_loss(out, target)
    loss.backward()
    save_safetensors("tutorial_net_io.safetensors", {"x": x, "target": target, "out": out, "loss": loss.reshape(1)})
    save_safetensors("tutorial_net_grads.safetensors", grads(model))


if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    resnet_case()
    keys_case()
    tutorial_case()
