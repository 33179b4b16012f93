#!/usr/bin/python3
"""Generates the PyTorch reference data of tensorbus' quantization-hook parity test
(io.tensorbus.parallel.QuantizationHookParityTest).

Run with Debian's python3 (torch 1.13), from anywhere:

    /usr/bin/python3 tools/make_quantization_data.py

PyTorch's quantization_pertensor_hook and quantization_perchannel_hook run on CUDA only, so this script runs
their own steps on the CPU, rank by rank, without communication: the module's _quantize_per_tensor_cuda /
_quantize_per_channel_cuda and _dequantize_* functions (plain tensor arithmetic), with the scale and zero point of
torch.quantization.MinMaxObserver / PerChannelMinMaxObserver, summed over the ranks in rank order and divided by
the world size, as the hooks' dequantize_and_aggregate does. It writes
api/distributed/src/test/resources/commhooks/quantization.json: a list of
    {hook, bucket_size, world, inputs: [[float, ...] per rank], output: [float, ...]}
with float32 values written as their exact decimal.
"""
import json
import os

import torch
from torch import nn
from torch.distributed.algorithms.ddp_comm_hooks import quantization_hooks as qh

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "api", "distributed", "src", "test",
                   "resources", "commhooks", "quantization.json")


def per_tensor(inputs):
    total = torch.zeros_like(inputs[0], dtype=torch.float32)
    for x in inputs:
        observer = torch.quantization.MinMaxObserver()
        observer(x)
        s, z = observer.calculate_qparams()
        s, z = torch.FloatTensor([s, z])
        total += qh._dequantize_per_tensor_cuda(qh._quantize_per_tensor_cuda(x, s, z), s, z)
    return total / len(inputs)


def per_channel(inputs, bucket_size):
    total = None
    for x in inputs:
        channels = nn.functional.pad(input=x, pad=(0, bucket_size - len(x) % bucket_size), mode="constant",
                                     value=0).view(-1, bucket_size)
        observer = torch.quantization.PerChannelMinMaxObserver()
        observer(channels)
        s, z = observer.calculate_qparams()
        s_and_z = torch.stack((s, z))
        q = qh._quantize_per_channel_cuda(channels, s_and_z[0, :], s_and_z[1, :])
        y = q.to(torch.float32)
        d = torch.zeros_like(y)
        for i in range(d.size()[0]):
            d[i, :] = s_and_z[0][i] * (y[i, :] - s_and_z[1][i])
        total = d if total is None else total + d
    return torch.flatten(total)[: len(inputs[0])] / len(inputs)


def main():
    torch.manual_seed(19)
    cases = []
    for world in (2, 3):
        for length in (1, 7, 300):
            inputs = [torch.randn(length) * (r + 1) + 0.3 * r for r in range(world)]
            cases.append({"hook": "pertensor", "bucket_size": 0, "world": world,
                          "inputs": [x.tolist() for x in inputs], "output": per_tensor(inputs).tolist()})
            for bucket_size in (4, 64):
                cases.append({"hook": "perchannel", "bucket_size": bucket_size, "world": world,
                              "inputs": [x.tolist() for x in inputs],
                              "output": per_channel(inputs, bucket_size).tolist()})
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as f:
        json.dump(cases, f)
    print("wrote", len(cases), "cases to", os.path.normpath(OUT))


if __name__ == "__main__":
    main()
