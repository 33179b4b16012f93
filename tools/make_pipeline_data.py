"""Writes the golden values of tensorbus's pipeline tests (issue 15) with Debian's PyTorch 1.13.

    /usr/bin/python3 tools/make_pipeline_data.py

The seed's pipeline-parallel ResNet50 (PyTorch's dist_pipeline_parallel_tutorial) cuts the model into ResNetShard1 (conv1, bn1,
ReLU, max pool, layer1, layer2) and ResNetShard2 (layer3, layer4, average pool, flatten, fc), and its
DistResNet50.forward sends every micro-batch through both and concatenates the outputs: each BatchNorm in
training mode normalises one micro-batch and updates its running statistics once per micro-batch. This
computes that forward pass for 1, 2 and 4 micro-batches of 8 images (64x64) with the narrow ResNet-50 of
make_nn_data.py (width 8, 10 classes), each from the same initial state, and writes under
api/distributed/src/test/resources/pipeline/resnet50_w8_pipeline.safetensors: the initial state dict
(init.*), the images x, the one-hot labels, and per micro-batch count M the MSE loss (loss.M) and bn1's
running mean after the pass (bn1_running_mean.M).
"""
import os

import torch
import torch.nn as nn
import torch.nn.functional as F

import safetensors_out
from make_nn_data import NarrowResNet

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "api", "distributed", "src", "test",
                   "resources", "pipeline")


def shards(model):
    first = nn.Sequential(model.conv1, model.bn1, model.relu, model.maxpool, model.layer1, model.layer2)
    second = nn.Sequential(model.layer3, model.layer4, model.avgpool, nn.Flatten(1), model.fc)
    return first, second


def main():
    torch.manual_seed(0)
    model = NarrowResNet([3, 4, 6, 3], 10, 8)
    init = {k: v.clone() for k, v in model.state_dict().items()}
    x = torch.randn(8, 3, 64, 64)
    labels = torch.zeros(8, 10).scatter_(1, torch.tensor([[3], [7], [0], [9], [1], [1], [5], [2]]), 1)
    out = {"x": x, "labels": labels}
    out.update({"init." + k: v for k, v in init.items()})
    for m in (1, 2, 4):
        model.load_state_dict(init)
        model.train()
        first, second = shards(model)
        outputs = [second(first(chunk)) for chunk in x.split(8 // m)]
        out[f"loss.{m}"] = F.mse_loss(torch.cat(outputs), labels).detach().reshape(1)
        out[f"bn1_running_mean.{m}"] = model.bn1.running_mean.clone()
    safetensors_out.save_safetensors(OUT, "resnet50_w8_pipeline.safetensors", out)


if __name__ == "__main__":
    main()
