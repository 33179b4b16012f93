#!/usr/bin/python3
"""Generates the PyTorch reference data for tensorbus' optimizer and LR-scheduler parity tests
(io.tensorbus.optim.OptimizerParityTest and LRSchedulerTest).

Run with Debian's python3 (torch 1.13 + numpy), from anywhere:

    /usr/bin/python3 tools/make_optim_data.py

For every case below it builds two float32 parameters (shapes [3, 4] and [5]) and five steps of fixed
gradients (not computed: drawn once from a seeded generator, with a different scale per step so that
AMSGrad's running maximum matters), sets them as .grad, calls optimizer.step(), and writes under
api/core/src/test/resources/optim/<case>/:

    init_<i>.npy        parameter i before the first step
    grad_<s>_<i>.npy    the gradient of parameter i at step s (0-based); absent when the case gives that
                        parameter no gradient at that step (its .grad is None, so the step skips it)
    param_<s>_<i>.npy   parameter i after step s

and api/core/src/test/resources/optim/cases.json, a list of
    {name, optimizer, defaults, groups, steps, missing}
where defaults are the constructor's keyword arguments (PyTorch names), groups (optional) gives one
option override per parameter (each parameter then being its own group), and missing lists the
[step, param] pairs without a gradient.

It also writes api/core/src/test/resources/optim/lr_schedulers.json: StepLR and CosineAnnealingLR learning
rates (get_last_lr() after construction and after each of 20 scheduler steps) for an SGD with two groups.
"""
import json
import os
import shutil
import zlib

import numpy as np
import torch

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "api", "core", "src", "test", "resources", "optim")
STEPS = 5
SHAPES = [(3, 4), (5,)]
SCALES = [1.0, 0.5, 2.0, 0.1, 1.5]  # gradient scale per step

CASES = [
    dict(name="sgd_plain", optimizer="sgd", defaults=dict(lr=0.1)),
    dict(name="sgd_momentum_dampening", optimizer="sgd", defaults=dict(lr=0.1, momentum=0.9, dampening=0.1),
         missing=[[2, 1]]),
    dict(name="sgd_nesterov", optimizer="sgd", defaults=dict(lr=0.05, momentum=0.8, nesterov=True)),
    dict(name="sgd_weight_decay", optimizer="sgd", defaults=dict(lr=0.1, momentum=0.5, weight_decay=0.01)),
    dict(name="sgd_maximize", optimizer="sgd", defaults=dict(lr=0.1, momentum=0.9, maximize=True)),
    dict(name="sgd_groups", optimizer="sgd", defaults=dict(lr=0.1, momentum=0.9),
         groups=[dict(), dict(lr=0.01, momentum=0.5)]),
    dict(name="adam", optimizer="adam", defaults=dict(lr=0.01), missing=[[2, 1]]),
    dict(name="adam_amsgrad", optimizer="adam", defaults=dict(lr=0.01, betas=[0.8, 0.9], amsgrad=True)),
    dict(name="adam_weight_decay", optimizer="adam", defaults=dict(lr=0.02, weight_decay=0.1, eps=1e-6)),
    dict(name="adam_maximize", optimizer="adam", defaults=dict(lr=0.01, maximize=True)),
    dict(name="adamw", optimizer="adamw", defaults=dict(lr=0.01, weight_decay=0.1)),
    dict(name="adamw_defaults", optimizer="adamw", defaults=dict()),
    dict(name="adamw_amsgrad", optimizer="adamw", defaults=dict(lr=0.01, betas=[0.8, 0.9], amsgrad=True)),
    dict(name="adagrad", optimizer="adagrad", defaults=dict(lr=0.1)),
    dict(name="adagrad_lr_decay", optimizer="adagrad",
         defaults=dict(lr=0.1, lr_decay=0.05, initial_accumulator_value=0.1, weight_decay=0.01),
         missing=[[1, 0]]),
]

OPTIMIZERS = dict(sgd=torch.optim.SGD, adam=torch.optim.Adam, adamw=torch.optim.AdamW,
                  adagrad=torch.optim.Adagrad)


def save(path, t):
    np.save(path, t.detach().numpy().astype(np.float32))


def run_case(case):
    gen = torch.Generator().manual_seed(zlib.crc32(case["name"].encode()))
    params = [torch.randn(s, generator=gen, dtype=torch.float32).requires_grad_() for s in SHAPES]
    grads = [[torch.randn(s, generator=gen, dtype=torch.float32) * SCALES[k] for s in SHAPES]
             for k in range(STEPS)]
    missing = {tuple(m) for m in case.get("missing", [])}
    out = os.path.join(ROOT, case["name"])
    os.makedirs(out)
    for i, p in enumerate(params):
        save(os.path.join(out, "init_%d.npy" % i), p)
    kwargs = dict(case["defaults"])
    if "betas" in kwargs:
        kwargs["betas"] = tuple(kwargs["betas"])
    if "groups" in case:
        spec = [dict(params=[p], **g) for p, g in zip(params, case["groups"])]
    else:
        spec = params
    opt = OPTIMIZERS[case["optimizer"]](spec, **kwargs)
    for k in range(STEPS):
        for i, p in enumerate(params):
            if (k, i) in missing:
                p.grad = None
            else:
                p.grad = grads[k][i].clone()
                save(os.path.join(out, "grad_%d_%d.npy" % (k, i)), grads[k][i])
        opt.step()
        for i, p in enumerate(params):
            save(os.path.join(out, "param_%d_%d.npy" % (k, i)), p)
    return dict(name=case["name"], optimizer=case["optimizer"], defaults=case["defaults"],
                groups=case.get("groups"), steps=STEPS, missing=case.get("missing", []))


def lr_sequence(make, steps=20):
    p0 = torch.zeros(2, requires_grad=True)
    p1 = torch.zeros(3, requires_grad=True)
    opt = torch.optim.SGD([dict(params=[p0]), dict(params=[p1], lr=0.05)], lr=0.1)
    sched = make(opt)
    seq = [sched.get_last_lr()]
    for _ in range(steps):
        opt.step()
        sched.step()
        seq.append(sched.get_last_lr())
    return seq


def main():
    if os.path.isdir(ROOT):
        shutil.rmtree(ROOT)
    os.makedirs(ROOT)
    meta = [run_case(c) for c in CASES]
    with open(os.path.join(ROOT, "cases.json"), "w") as f:
        json.dump(meta, f, indent=1)
    lrs = dict(
        base_lrs=[0.1, 0.05],
        step_lr=dict(step_size=3, gamma=0.5,
                     lrs=lr_sequence(lambda o: torch.optim.lr_scheduler.StepLR(o, step_size=3, gamma=0.5))),
        cosine=dict(t_max=7, eta_min=0.001,
                    lrs=lr_sequence(lambda o: torch.optim.lr_scheduler.CosineAnnealingLR(o, T_max=7,
                                                                                        eta_min=0.001))),
        cosine_zero_min=dict(t_max=4, eta_min=0.0,
                             lrs=lr_sequence(lambda o: torch.optim.lr_scheduler.CosineAnnealingLR(o, T_max=4))),
    )
    with open(os.path.join(ROOT, "lr_schedulers.json"), "w") as f:
        json.dump(lrs, f, indent=1)


if __name__ == "__main__":
    main()
