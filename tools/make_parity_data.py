#!/usr/bin/python3
"""Generates the PyTorch reference data for tensorbus' numeric parity test (ParityTest).

Run with Debian's python3 (torch 1.13 + numpy), from the repository root:

    /usr/bin/python3 tools/make_parity_data.py

For every case it builds deterministic inputs (the seed is a CRC of the case name, so adding a case
never changes the others), runs the forward in PyTorch, backpropagates a fixed random upstream gradient
(a random 0-d gradient for scalar outputs) and writes, under api/core/src/test/resources/parity/<case>/:

    <input>.npy   every input: float ones are leaves, integer ones indices or targets; the second operand
                  of a binary op is named "other" (so that its gradient, gother.npy, is not gy.npy)
    out.npy       the output (out0.npy, out1.npy ... for ops with several outputs)
    gy.npy        the upstream gradient (gy0.npy ... for several outputs; absent for integer outputs)
    g<input>.npy  the gradient of each input listed in the case's "grad"
    <extra>.npy   extra results listed in "extra" (batch_norm: running stats after the call)

and api/core/src/test/resources/parity/cases.json, a list of
    {name, op, dtype, inputs, grad, params, outputs, multi, used, extra, rtol, atol[, note]}
(used: the outputs that receive an upstream gradient; note: the PyTorch rule an edge case pins down), where params fully determine the call (see torch_op below: ParityTest mirrors it op by op).

PARITY_DIR=/some/dir writes elsewhere (for sweeps: importing this module and calling case() directly);
ParityTest runs such a directory with -Dparity.dir=/some/dir.
"""
import json
import os
import shutil
import zlib

import numpy as np
import torch
import torch.nn.functional as F

ROOT = os.environ.get("PARITY_DIR") or os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "api", "core", "src",
                                                    "test", "resources", "parity")
F32, F64 = torch.float32, torch.float64
CASES = []

# ops computed with long sums (different summation order than PyTorch's kernels)
ACCUMULATING = {"matmul", "mm", "bmm", "linear", "conv2d", "batch_norm"}


def torch_op(op, t, p):
    """Runs op on the dict of tensors t with params p; the single source of truth for what a case means."""
    x = t.get("x")
    if "transpose_x" in p:
        x = x.transpose(*p["transpose_x"])
    y = x if p.get("other_is_x") else t.get("other")
    if y is not None and "transpose_other" in p:
        y = y.transpose(*p["transpose_other"])
    if op in ("add", "sub", "mul", "div"):
        other = p["scalar"] if "scalar" in p else y
        if op == "add":
            return torch.add(x, other, alpha=p["alpha"]) if "alpha" in p else x + other
        if op == "sub":
            return x - other
        if op == "mul":
            return x * other
        return x / other
    if op in ("neg", "exp", "log", "sqrt", "abs", "relu", "sigmoid", "tanh"):
        return getattr(torch, op)(x)
    if op == "pow":
        return x.pow(p["exponent"]) if "exponent" in p else x.pow(y)
    if op == "clamp":
        return x.clamp(min=p["min"], max=p["max"])
    if op == "matmul":
        return torch.matmul(x, y)
    if op == "mm":
        return torch.mm(x, y)
    if op == "bmm":
        return torch.bmm(x, y)
    if op in ("sum", "mean"):
        if p["dims"] is None:
            return getattr(x, op)()
        return getattr(x, op)(dim=p["dims"], keepdim=p["keepdim"])
    if op in ("max", "min", "argmax"):
        if p["dim"] is None:
            return getattr(x, op)()
        r = getattr(x, op)(dim=p["dim"], keepdim=p["keepdim"])
        return r if op == "argmax" else r.values
    if op == "softmax":
        return F.softmax(x, dim=p["dim"])
    if op == "log_softmax":
        return F.log_softmax(x, dim=p["dim"])
    if op == "linear":
        return F.linear(x, t["w"], t.get("b"))
    if op == "conv2d":
        return F.conv2d(x, t["w"], t.get("b"), stride=p["stride"], padding=p["padding"], dilation=p["dilation"],
                        groups=p["groups"])
    if op == "max_pool2d":
        return F.max_pool2d(x, p["kernel"], stride=p["stride"], padding=p["padding"], ceil_mode=p["ceil_mode"])
    if op == "avg_pool2d":
        return F.avg_pool2d(x, p["kernel"], stride=p["stride"], padding=p["padding"], ceil_mode=p["ceil_mode"],
                            count_include_pad=p["count_include_pad"])
    if op == "adaptive_avg_pool2d":
        return F.adaptive_avg_pool2d(x, p["output_size"])
    if op == "batch_norm":
        return F.batch_norm(x, t.get("running_mean"), t.get("running_var"), t.get("w"), t.get("b"),
                            training=p["training"], momentum=p["momentum"], eps=p["eps"])
    if op == "flatten":
        return x.flatten(p["start"], p["end"])
    if op == "view":
        return x.view(p["shape"])
    if op == "reshape":
        return x.reshape(p["shape"])
    if op == "transpose":
        return x.transpose(p["dim0"], p["dim1"])
    if op == "t":
        return x.t()
    if op == "permute":
        return x.permute(p["dims"])
    if op == "narrow":
        return x.narrow(p["dim"], p["start"], p["length"])
    if op == "slice":
        idx = [slice(None)] * x.dim()
        idx[p["dim"]] = slice(p["start"], p["end"], p["step"])
        return x[tuple(idx)]
    if op == "select":
        return x.select(p["dim"], p["index"])
    if op == "expand":
        return x.expand(p["shape"])
    if op == "squeeze":
        return x.squeeze() if p["dim"] is None else x.squeeze(p["dim"])
    if op == "unsqueeze":
        return x.unsqueeze(p["dim"])
    if op == "cat":
        return torch.cat([t[n] for n in ("a", "b", "c")], dim=p["dim"])
    if op == "stack":
        return torch.stack([t[n] for n in ("a", "b", "c")], dim=p["dim"])
    if op == "split":
        return list(torch.split(x, p["sizes"] if "sizes" in p else p["size"], dim=p["dim"]))
    if op == "chunk":
        return list(torch.chunk(x, p["chunks"], dim=p["dim"]))
    if op == "index_select":
        return torch.index_select(x, p["dim"], t["index"])
    if op == "gather":
        return torch.gather(x, p["dim"], t["index"])
    if op == "scatter":
        if "value" in p:
            return x.scatter(p["dim"], t["index"], p["value"])
        return x.scatter(p["dim"], t["index"], t["src"])
    if op == "one_hot":
        return F.one_hot(t["idx"], p["num_classes"])
    if op == "nll_loss":
        return F.nll_loss(x, t["target"], weight=t.get("weight"), ignore_index=p["ignore_index"],
                          reduction=p["reduction"])
    if op == "cross_entropy":
        return F.cross_entropy(x, t["target"], weight=t.get("weight"), ignore_index=p["ignore_index"],
                               reduction=p["reduction"])
    if op == "mse_loss":
        return F.mse_loss(x, t["target"], reduction=p["reduction"])
    raise ValueError("unknown op " + op)


def save(path, tensor):
    np.save(path, tensor.detach().cpu().numpy())


def case(name, op, make, params=None, grad=None, dtype=F32, used=None, extra=(), rtol=None, atol=None, note=None):
    """make(dtype) -> dict of input tensors (built after seeding); grad: names of inputs to differentiate
    (default: every floating input except running stats and loss class weights); note: the PyTorch
    behaviour an edge case pins down, repeated in ParityTest's failure messages."""
    params = dict(params or {})
    assert name not in [c["name"] for c in CASES], name
    torch.manual_seed(zlib.crc32(name.encode()))
    inputs = make(dtype)
    if grad is None:
        grad = [n for n, v in inputs.items() if v.is_floating_point() and not n.startswith("running_")
                and n != "weight"]  # class weights of losses are not differentiable in PyTorch
    leaves = {}
    for n, v in inputs.items():
        v = v.detach().clone()
        if n in grad:
            v.requires_grad_(True)
        leaves[n] = v
    saved_inputs = {n: v.detach().clone() for n, v in leaves.items()}  # before in-place running-stat updates
    out = torch_op(op, leaves, params)
    outs = out if isinstance(out, list) else [out]
    used = list(range(len(outs))) if used is None else used
    gys = []
    if not outs[0].is_floating_point() or not grad:  # argmax, one_hot, integer inputs: nothing to differentiate
        grad = []
    else:
        for i in range(len(outs)):
            gys.append(torch.randn(outs[i].shape, dtype=outs[i].dtype))
        torch.autograd.backward([outs[i] for i in used], [gys[i] for i in used])
    d = os.path.join(ROOT, name)
    os.makedirs(d)
    for n, v in saved_inputs.items():
        save(os.path.join(d, n + ".npy"), v)
    multi = isinstance(out, list)
    for i, o in enumerate(outs):
        save(os.path.join(d, ("out%d" % i if multi else "out") + ".npy"), o)
    for i, g in enumerate(gys):
        if i in used:
            save(os.path.join(d, ("gy%d" % i if multi else "gy") + ".npy"), g)
    for n in grad:
        g = leaves[n].grad
        if g is None:
            g = torch.zeros_like(leaves[n])
        save(os.path.join(d, "g" + n + ".npy"), g)
    for n in extra:  # in-place updated inputs, saved after the call
        save(os.path.join(d, n + "_after.npy"), leaves[n])
    if rtol is None:
        rtol = 1e-10 if dtype == F64 else 1e-4
    if atol is None:
        atol = 1e-12 if dtype == F64 else (1e-4 if op in ACCUMULATING else 1e-5)
    CASES.append({
        "name": name, "op": op, "dtype": "float64" if dtype == F64 else "float32",
        "inputs": list(inputs.keys()), "grad": grad, "params": params,
        "outputs": len(outs) if multi else 1, "multi": multi, "used": used if multi else [0],
        "extra": list(extra), "rtol": rtol, "atol": atol,
    })
    if note:
        CASES[-1]["note"] = note


# ------------------------------------------------------------------ input makers

def rn(*shape):
    return lambda dt: {"x": torch.randn(tuple(shape), dtype=dt)}


def rn2(sx, sy, ypos=False):
    def make(dt):
        x = torch.randn(tuple(sx), dtype=dt)
        y = torch.randn(tuple(sy), dtype=dt)
        if ypos:  # denominators away from zero, both signs
            y = (torch.rand(tuple(sy), dtype=dt) + 0.5) * torch.where(torch.rand(tuple(sy)) < 0.5, -1.0, 1.0).to(dt)
        return {"x": x, "other": y}
    return make


def pos(*shape):
    return lambda dt: {"x": torch.rand(tuple(shape), dtype=dt) * 1.5 + 0.5}


def with_exact(values, *shape):
    """randn with some entries set to exact values (zeros, clamp bounds) to test subgradient conventions."""
    def make(dt):
        x = torch.randn(tuple(shape), dtype=dt)
        flat = x.view(-1)
        for i, v in enumerate(values):
            flat[3 * i + 1] = v
        return {"x": x}
    return make


def idx(high, *shape):
    return torch.randint(0, high, shape, dtype=torch.int64)


# ------------------------------------------------------------------ cases

def elementwise():
    for op in ("add", "sub", "mul", "div"):
        ypos = op == "div"
        case(op + "_same_shape", op, rn2((3, 4), (3, 4), ypos))
        case(op + "_broadcast_3x1x5_4x5", op, rn2((3, 1, 5), (4, 5), ypos))
        case(op + "_broadcast_4x1_1x5", op, rn2((4, 1), (1, 5), ypos))
        case(op + "_broadcast_2x3x4_vec4", op, rn2((2, 3, 4), (4,), ypos))
        case(op + "_broadcast_vec4_2x3x4", op, rn2((4,), (2, 3, 4), ypos))
        case(op + "_tensor_0d", op, rn2((3, 4), (), ypos))
        case(op + "_scalar", op, rn(3, 4), {"scalar": 2.5})
        case(op + "_broadcast_f64", op, rn2((3, 1, 5), (4, 5), ypos), dtype=F64)
        case(op + "_transposed_operand", op, rn2((5, 3), (3, 5), ypos), {"transpose_x": [0, 1]})
    case("add_alpha", "add", rn2((3, 1, 5), (4, 5)), {"alpha": 2.5})
    # the same leaf on both sides: the two gradient contributions must accumulate
    for op in ("add", "sub", "mul", "div"):
        case(op + "_self", op, pos(3, 4), {"other_is_x": True})

    def mixed(dt):  # float32 with float64: PyTorch promotes the result to float64
        return {"x": torch.randn(3, 4, dtype=F32), "other": torch.randn(4, dtype=F64)}
    case("add_promotes_f32_f64", "add", mixed)
    case("mul_promotes_f32_f64", "mul", mixed)
    # big enough for the parallel elementwise path (> 2^15 elements) with a broadcast backward
    case("mul_broadcast_parallel_180x1_200", "mul", rn2((180, 1), (200,)))
    case("div_scalar_f64", "div", rn(3, 4), {"scalar": -0.75}, dtype=F64)

    for op in ("neg", "exp", "sigmoid", "tanh"):
        case(op, op, rn(3, 5))
        case(op + "_f64", op, rn(3, 5), dtype=F64)
    case("exp_transposed", "exp", rn(4, 3), {"transpose_x": [0, 1]})
    case("sigmoid_large", "sigmoid", lambda dt: {"x": torch.randn(4, 5, dtype=dt) * 30})
    case("tanh_large", "tanh", lambda dt: {"x": torch.randn(4, 5, dtype=dt) * 30})
    for op in ("log", "sqrt"):
        case(op, op, pos(3, 5))
        case(op + "_f64", op, pos(3, 5), dtype=F64)
    case("abs", "abs", rn(3, 5))
    case("abs_at_zero", "abs", with_exact([0.0, 0.0], 3, 5))
    case("relu", "relu", rn(3, 5))
    case("relu_at_zero", "relu", with_exact([0.0, 0.0, 0.0], 3, 5))
    case("relu_f64", "relu", rn(3, 5), dtype=F64)

    case("pow_scalar_2", "pow", rn(3, 5), {"exponent": 2.0})
    case("pow_scalar_3_negative_base", "pow", rn(3, 5), {"exponent": 3.0})
    case("pow_scalar_half", "pow", pos(3, 5), {"exponent": 0.5})
    case("pow_scalar_neg_1_5", "pow", pos(3, 5), {"exponent": -1.5})
    case("pow_scalar_0", "pow", rn(3, 5), {"exponent": 0.0})
    case("pow_scalar_1", "pow", rn(3, 5), {"exponent": 1.0})
    case("pow_scalar_2_5_f64", "pow", pos(3, 5), {"exponent": 2.5}, dtype=F64)

    def powt(sx, sy):
        def make(dt):
            return {"x": torch.rand(tuple(sx), dtype=dt) * 1.5 + 0.5, "other": torch.randn(tuple(sy), dtype=dt)}
        return make
    case("pow_tensor_same_shape", "pow", powt((3, 5), (3, 5)))
    case("pow_tensor_broadcast_3x1x5_4x5", "pow", powt((3, 1, 5), (4, 5)))
    case("pow_tensor_broadcast_exponent_vec", "pow", powt((3, 5), (5,)))
    case("pow_tensor_f64", "pow", powt((3, 5), (3, 5)), dtype=F64)

    case("clamp_both", "clamp", rn(4, 5), {"min": -0.5, "max": 0.5})
    case("clamp_min_only", "clamp", rn(4, 5), {"min": -0.25, "max": None})
    case("clamp_max_only", "clamp", rn(4, 5), {"min": None, "max": 0.25})
    case("clamp_at_bounds", "clamp", with_exact([-0.5, 0.5, -0.5, 0.5], 4, 5), {"min": -0.5, "max": 0.5})
    case("clamp_f64", "clamp", rn(4, 5), {"min": -0.5, "max": 0.5}, dtype=F64)


def linalg():
    case("matmul_1d_1d", "matmul", rn2((5,), (5,)))
    case("matmul_2d_2d", "matmul", rn2((3, 4), (4, 5)))
    case("matmul_1d_2d", "matmul", rn2((4,), (4, 5)))
    case("matmul_2d_1d", "matmul", rn2((3, 4), (4,)))
    case("matmul_3d_2d_broadcast", "matmul", rn2((2, 3, 4), (4, 5)))
    case("matmul_2d_3d_broadcast", "matmul", rn2((3, 4), (2, 4, 5)))
    case("matmul_3d_1d", "matmul", rn2((2, 3, 4), (4,)))
    case("matmul_1d_3d", "matmul", rn2((4,), (2, 4, 5)))
    case("matmul_3d_3d", "matmul", rn2((2, 3, 4), (2, 4, 5)))
    case("matmul_4d_4d", "matmul", rn2((2, 3, 3, 4), (2, 3, 4, 5)))
    case("matmul_4d_4d_broadcast_batch", "matmul", rn2((2, 1, 3, 4), (1, 3, 4, 5)))
    case("matmul_2d_2d_transposed", "matmul", rn2((4, 3), (5, 4)), {"transpose_x": [0, 1], "transpose_other": [0, 1]})
    case("matmul_2d_2d_f64", "matmul", rn2((3, 4), (4, 5)), dtype=F64)
    case("matmul_4d_4d_broadcast_batch_f64", "matmul", rn2((2, 1, 3, 4), (1, 3, 4, 5)), dtype=F64)
    case("matmul_larger_64", "matmul", rn2((17, 64), (64, 33)))
    # depth above the GEMM's 256 blocking and enough work (> 2^19 multiply-adds) for the parallel split
    case("matmul_blocked_parallel_64x300x40", "matmul", rn2((64, 300), (300, 40)))
    case("matmul_blocked_depth_20x300x30_f64", "matmul", rn2((20, 300), (300, 30)), dtype=F64)
    # more columns than the GEMM's 512-column block
    case("matmul_wide_8x20x530", "matmul", rn2((8, 20), (20, 530)))
    case("mm", "mm", rn2((3, 4), (4, 5)))
    case("mm_transposed_operand", "mm", rn2((4, 3), (4, 5)), {"transpose_x": [0, 1]})
    case("mm_f64", "mm", rn2((3, 4), (4, 5)), dtype=F64)
    case("bmm", "bmm", rn2((2, 3, 4), (2, 4, 5)))
    case("bmm_transposed_operand", "bmm", rn2((2, 5, 4), (2, 3, 4)), {"transpose_other": [1, 2]})
    case("bmm_f64", "bmm", rn2((2, 3, 4), (2, 4, 5)), dtype=F64)

    def lin(sx, out, bias=True):
        def make(dt):
            d = {"x": torch.randn(tuple(sx), dtype=dt), "w": torch.randn(out, sx[-1], dtype=dt)}
            if bias:
                d["b"] = torch.randn(out, dtype=dt)
            return d
        return make
    case("linear_bias", "linear", lin((4, 6), 3))
    case("linear_no_bias", "linear", lin((4, 6), 3, bias=False))
    case("linear_3d_input", "linear", lin((2, 4, 6), 3))
    case("linear_1d_input", "linear", lin((6,), 3))
    case("linear_bias_f64", "linear", lin((4, 6), 3), dtype=F64)


def reductions():
    for op in ("sum", "mean"):
        case(op + "_all", op, rn(3, 4, 5), {"dims": None, "keepdim": False})
        case(op + "_dim1", op, rn(3, 4, 5), {"dims": [1], "keepdim": False})
        case(op + "_dim1_keepdim", op, rn(3, 4, 5), {"dims": [1], "keepdim": True})
        case(op + "_dim_neg1", op, rn(3, 4, 5), {"dims": [-1], "keepdim": False})
        case(op + "_dims_0_2", op, rn(3, 4, 5), {"dims": [0, 2], "keepdim": False})
        case(op + "_dims_0_2_keepdim", op, rn(3, 4, 5), {"dims": [0, 2], "keepdim": True})
        case(op + "_all_f64", op, rn(3, 4, 5), {"dims": None, "keepdim": False}, dtype=F64)
        case(op + "_dim0_f64", op, rn(3, 4, 5), {"dims": [0], "keepdim": False}, dtype=F64)
        case(op + "_dim0_transposed", op, rn(5, 4), {"dims": [0], "keepdim": False, "transpose_x": [0, 1]})
    case("sum_large_1000", "sum", rn(1000), {"dims": None, "keepdim": False})
    case("sum_all_dims_listed_keepdim", "sum", rn(3, 4, 5), {"dims": [0, 1, 2], "keepdim": True})
    case("sum_dim0_parallel_300x120", "sum", rn(300, 120), {"dims": [0], "keepdim": False})
    case("mean_dim1_parallel_300x120", "mean", rn(300, 120), {"dims": [1], "keepdim": False})
    case("mean_large_dim1", "mean", rn(4, 500), {"dims": [1], "keepdim": False})
    for op in ("max", "min"):
        case(op + "_all", op, rn(3, 4, 5), {"dim": None, "keepdim": False})
        case(op + "_dim1", op, rn(3, 4, 5), {"dim": 1, "keepdim": False})
        case(op + "_dim1_keepdim", op, rn(3, 4, 5), {"dim": 1, "keepdim": True})
        case(op + "_dim_neg1", op, rn(3, 4, 5), {"dim": -1, "keepdim": False})
        case(op + "_dim0_f64", op, rn(3, 4, 5), {"dim": 0, "keepdim": True}, dtype=F64)

        def ties(dt):  # integer values: ties everywhere
            return {"x": torch.randint(0, 3, (4, 5)).to(dt)}
        # full reduction with ties: PyTorch spreads the gradient evenly over the tied elements
        case(op + "_all_ties", op, ties, {"dim": None, "keepdim": False})
        # reduction over a dim with ties: PyTorch (CPU) picks the first index
        case(op + "_dim1_ties", op, ties, {"dim": 1, "keepdim": False})
    case("argmax_dim1", "argmax", rn(3, 4, 5), {"dim": 1, "keepdim": False})
    case("argmax_dim1_keepdim", "argmax", rn(3, 4, 5), {"dim": 1, "keepdim": True})
    case("argmax_dim_neg1", "argmax", rn(3, 4, 5), {"dim": -1, "keepdim": False})
    case("argmax_all", "argmax", rn(3, 4, 5), {"dim": None, "keepdim": False})
    case("argmax_ties_first", "argmax", lambda dt: {"x": torch.randint(0, 3, (4, 6)).to(dt)},
         {"dim": 1, "keepdim": False})

    for op in ("softmax", "log_softmax"):
        case(op + "_dim1", op, rn(3, 5), {"dim": 1})
        case(op + "_dim0", op, rn(3, 5), {"dim": 0})
        case(op + "_3d_dim_neg1", op, rn(2, 3, 4), {"dim": -1})
        case(op + "_3d_dim1", op, rn(2, 3, 4), {"dim": 1})
        case(op + "_large_logits", op, lambda dt: {"x": torch.randn(3, 5, dtype=dt) * 100}, {"dim": 1})
        case(op + "_f64", op, rn(2, 3, 4), {"dim": 1}, dtype=F64)
        case(op + "_transposed", op, rn(5, 3), {"dim": 1, "transpose_x": [0, 1]})


def conv():
    def mk(xs, ws, bias=True):
        def make(dt):
            d = {"x": torch.randn(tuple(xs), dtype=dt), "w": torch.randn(*ws, dtype=dt) * 0.3}
            if bias:
                d["b"] = torch.randn(ws[0], dtype=dt)
            return d
        return make

    def p(stride=(1, 1), padding=(0, 0), dilation=(1, 1), groups=1):
        return {"stride": list(stride), "padding": list(padding), "dilation": list(dilation), "groups": groups}
    X = (2, 4, 9, 9)
    case("conv2d_basic_bias", "conv2d", mk(X, (6, 4, 3, 3)), p())
    case("conv2d_no_bias", "conv2d", mk(X, (6, 4, 3, 3), bias=False), p())
    case("conv2d_stride2_pad1", "conv2d", mk(X, (6, 4, 3, 3)), p((2, 2), (1, 1)))
    case("conv2d_pad2", "conv2d", mk(X, (6, 4, 3, 3)), p(padding=(2, 2)))
    case("conv2d_dilation2_pad2", "conv2d", mk(X, (6, 4, 3, 3)), p(padding=(2, 2), dilation=(2, 2)))
    case("conv2d_dilation2_stride2", "conv2d", mk(X, (5, 4, 3, 3)), p((2, 2), dilation=(2, 2)))
    case("conv2d_groups2", "conv2d", mk(X, (6, 2, 3, 3)), p(padding=(1, 1), groups=2))
    case("conv2d_groups4_depthwise", "conv2d", mk(X, (4, 1, 3, 3)), p(padding=(1, 1), groups=4))
    case("conv2d_groups4_depthwise_multiplier2", "conv2d", mk(X, (8, 1, 3, 3), bias=False),
         p((2, 2), (1, 1), groups=4))
    case("conv2d_1x1", "conv2d", mk(X, (5, 4, 1, 1)), p())
    case("conv2d_1x1_stride2", "conv2d", mk(X, (5, 4, 1, 1), bias=False), p((2, 2)))
    case("conv2d_rect_kernel_stride", "conv2d", mk((2, 4, 9, 8), (6, 4, 2, 3)), p((2, 1), (1, 0)))
    case("conv2d_stride2_uneven", "conv2d", mk((2, 4, 10, 9), (3, 4, 4, 4)), p((2, 3), (1, 2)))
    case("conv2d_7x7_stride2_pad3", "conv2d", mk((1, 3, 12, 12), (4, 3, 7, 7)), p((2, 2), (3, 3)))
    case("conv2d_batch1_cin1", "conv2d", mk((1, 1, 6, 6), (2, 1, 3, 3)), p())
    case("conv2d_larger_8to16_17x17", "conv2d", mk((2, 8, 17, 17), (16, 8, 3, 3)), p(padding=(1, 1)))
    case("conv2d_noncontiguous_input", "conv2d", mk(X, (6, 4, 3, 3)), {**p((2, 1), (1, 1)), "transpose_x": [2, 3]})
    case("conv2d_basic_f64", "conv2d", mk(X, (6, 4, 3, 3)), p((2, 2), (1, 1)), dtype=F64)
    case("conv2d_groups2_dilation2_f64", "conv2d", mk(X, (6, 2, 3, 3)), p(padding=(2, 2), dilation=(2, 2), groups=2),
         dtype=F64)


def pooling():
    def mp(kernel, stride, padding=(0, 0), ceil=False):
        return {"kernel": list(kernel), "stride": None if stride is None else list(stride), "padding": list(padding),
                "ceil_mode": ceil}
    X = (2, 3, 9, 9)
    case("max_pool2d_k2", "max_pool2d", rn(2, 3, 8, 8), mp((2, 2), None))
    case("max_pool2d_k2_odd_input", "max_pool2d", rn(*X), mp((2, 2), None))
    case("max_pool2d_k3_s2", "max_pool2d", rn(*X), mp((3, 3), (2, 2)))
    case("max_pool2d_k3_s1", "max_pool2d", rn(*X), mp((3, 3), (1, 1)))
    case("max_pool2d_k3_s2_p1", "max_pool2d", rn(*X), mp((3, 3), (2, 2), (1, 1)))
    case("max_pool2d_k3_s2_ceil", "max_pool2d", rn(2, 3, 8, 8), mp((3, 3), (2, 2), ceil=True))
    case("max_pool2d_k2_s2_p1_ceil", "max_pool2d", rn(2, 3, 8, 8), mp((2, 2), (2, 2), (1, 1), True))
    case("max_pool2d_k3_s2_p1_ceil", "max_pool2d", rn(*X), mp((3, 3), (2, 2), (1, 1), True))
    case("max_pool2d_rect", "max_pool2d", rn(*X), mp((2, 3), (1, 2), (1, 1)))
    case("max_pool2d_3d_input", "max_pool2d", rn(3, 8, 8), mp((2, 2), None))
    case("max_pool2d_all_negative_padded", "max_pool2d", lambda dt: {"x": -torch.rand(1, 2, 5, 5, dtype=dt) - 1},
         mp((3, 3), (2, 2), (1, 1)))
    case("max_pool2d_noncontiguous_input", "max_pool2d", rn(2, 3, 9, 8), {**mp((3, 3), (2, 2), (1, 1)),
                                                                         "transpose_x": [2, 3]})
    case("max_pool2d_f64", "max_pool2d", rn(*X), mp((3, 3), (2, 2), (1, 1)), dtype=F64)

    def ap(kernel, stride, padding=(0, 0), ceil=False, cip=True):
        d = mp(kernel, stride, padding, ceil)
        d["count_include_pad"] = cip
        return d
    case("avg_pool2d_k2", "avg_pool2d", rn(2, 3, 8, 8), ap((2, 2), None))
    case("avg_pool2d_k3_s2", "avg_pool2d", rn(*X), ap((3, 3), (2, 2)))
    case("avg_pool2d_k3_s2_p1_include_pad", "avg_pool2d", rn(*X), ap((3, 3), (2, 2), (1, 1), cip=True))
    case("avg_pool2d_k3_s2_p1_exclude_pad", "avg_pool2d", rn(*X), ap((3, 3), (2, 2), (1, 1), cip=False))
    case("avg_pool2d_k3_s2_ceil_include_pad", "avg_pool2d", rn(2, 3, 8, 8), ap((3, 3), (2, 2), ceil=True, cip=True))
    case("avg_pool2d_k3_s2_ceil_exclude_pad", "avg_pool2d", rn(2, 3, 8, 8), ap((3, 3), (2, 2), ceil=True, cip=False))
    case("avg_pool2d_k3_s2_p1_ceil_include_pad", "avg_pool2d", rn(2, 3, 8, 8),
         ap((3, 3), (2, 2), (1, 1), ceil=True, cip=True))
    case("avg_pool2d_k3_s2_p1_ceil_exclude_pad", "avg_pool2d", rn(2, 3, 8, 8),
         ap((3, 3), (2, 2), (1, 1), ceil=True, cip=False))
    case("avg_pool2d_k2_s2_p1_ceil_include_pad", "avg_pool2d", rn(*X), ap((2, 2), (2, 2), (1, 1), ceil=True))
    case("avg_pool2d_rect", "avg_pool2d", rn(*X), ap((2, 3), (1, 2), (1, 1)))
    case("avg_pool2d_3d_input", "avg_pool2d", rn(3, 8, 8), ap((2, 2), None))
    case("avg_pool2d_noncontiguous_input", "avg_pool2d", rn(2, 3, 9, 8), {**ap((3, 3), (2, 2), (1, 1)),
                                                                         "transpose_x": [1, 3]})
    case("avg_pool2d_f64", "avg_pool2d", rn(*X), ap((3, 3), (2, 2), (1, 1), cip=False), dtype=F64)

    for (h, w), (oh, ow) in [((9, 9), (1, 1)), ((7, 7), (3, 3)), ((9, 9), (4, 4)), ((8, 8), (3, 5)),
                             ((8, 8), (4, 4)), ((5, 5), (7, 7)), ((6, 10), (4, 3)), ((4, 4), (4, 4))]:
        case("adaptive_avg_pool2d_%dx%d_to_%dx%d" % (h, w, oh, ow), "adaptive_avg_pool2d", rn(2, 3, h, w),
             {"output_size": [oh, ow]})
    case("adaptive_avg_pool2d_3d_input", "adaptive_avg_pool2d", rn(3, 7, 7), {"output_size": [3, 3]})
    case("adaptive_avg_pool2d_f64", "adaptive_avg_pool2d", rn(2, 3, 7, 7), {"output_size": [3, 3]}, dtype=F64)


def batchnorm():
    def bn(xs, affine=True, running=True, scale=1.0, shift=0.0):
        def make(dt):
            c = xs[1]
            d = {"x": torch.randn(tuple(xs), dtype=dt) * scale + shift}
            if affine:
                d["w"] = torch.rand(c, dtype=dt) + 0.5
                d["b"] = torch.randn(c, dtype=dt)
            if running:
                d["running_mean"] = torch.randn(c, dtype=dt) * 0.1
                d["running_var"] = torch.rand(c, dtype=dt) + 0.5
            return d
        return make

    def p(training, momentum=0.1, eps=1e-5):
        return {"training": training, "momentum": momentum, "eps": eps}
    run = ["running_mean", "running_var"]
    case("batch_norm_train_4d", "batch_norm", bn((4, 3, 5, 5)), p(True), extra=run)
    case("batch_norm_train_2d", "batch_norm", bn((8, 3)), p(True), extra=run)
    case("batch_norm_train_3d", "batch_norm", bn((4, 3, 6)), p(True, 0.3), extra=run)
    case("batch_norm_train_no_affine", "batch_norm", bn((4, 3, 5, 5), affine=False), p(True), extra=run)
    case("batch_norm_train_no_running_stats", "batch_norm", bn((4, 3, 5, 5), running=False), p(True))
    case("batch_norm_train_offset_input", "batch_norm", bn((4, 3, 5, 5), scale=3.0, shift=5.0), p(True, 0.2, 1e-3),
         extra=run)
    case("batch_norm_train_small_batch_2", "batch_norm", bn((2, 3)), p(True), extra=run)
    case("batch_norm_eval_4d", "batch_norm", bn((4, 3, 5, 5)), p(False))
    case("batch_norm_eval_2d_no_affine", "batch_norm", bn((8, 3), affine=False), p(False))
    case("batch_norm_train_4d_f64", "batch_norm", bn((4, 3, 5, 5)), p(True), dtype=F64, extra=run)
    case("batch_norm_eval_4d_f64", "batch_norm", bn((4, 3, 5, 5)), p(False), dtype=F64)


def views():
    case("flatten_all", "flatten", rn(2, 3, 4), {"start": 0, "end": -1})
    case("flatten_from1", "flatten", rn(2, 3, 4, 5), {"start": 1, "end": -1})
    case("flatten_middle", "flatten", rn(2, 3, 4, 5), {"start": 1, "end": 2})
    case("flatten_transposed_input", "flatten", rn(3, 2, 4), {"start": 0, "end": -1, "transpose_x": [0, 1]})
    case("view", "view", rn(2, 3, 4), {"shape": [6, 4]})
    case("view_infer", "view", rn(2, 3, 4), {"shape": [4, -1]})
    case("reshape", "reshape", rn(2, 3, 4), {"shape": [3, 8]})
    case("reshape_noncontiguous_copy", "reshape", rn(3, 2, 4), {"shape": [8, 3], "transpose_x": [0, 2]})
    case("transpose", "transpose", rn(2, 3, 4), {"dim0": 0, "dim1": 2})
    case("transpose_neg_dims", "transpose", rn(2, 3, 4), {"dim0": -1, "dim1": -2})
    case("t", "t", rn(3, 4), {})
    case("permute", "permute", rn(2, 3, 4), {"dims": [2, 0, 1]})
    case("permute_4d", "permute", rn(2, 3, 4, 5), {"dims": [0, 2, 3, 1]})
    case("narrow", "narrow", rn(4, 6), {"dim": 1, "start": 2, "length": 3})
    case("narrow_dim0", "narrow", rn(5, 3, 2), {"dim": 0, "start": 1, "length": 2})
    case("slice_step2", "slice", rn(4, 7), {"dim": 1, "start": 1, "end": 7, "step": 2})
    case("select", "select", rn(3, 4, 5), {"dim": 1, "index": 2})
    case("select_neg_index", "select", rn(3, 4, 5), {"dim": 0, "index": -1})
    case("expand", "expand", rn(3, 1), {"shape": [3, 4]})
    case("expand_new_dims", "expand", rn(1, 4), {"shape": [2, 3, 4]})
    case("expand_keep_minus1", "expand", rn(3, 1, 2), {"shape": [-1, 5, -1]})
    case("squeeze_all", "squeeze", rn(3, 1, 4, 1), {"dim": None})
    case("squeeze_dim", "squeeze", rn(3, 1, 4, 1), {"dim": 1})
    case("squeeze_dim_not_one", "squeeze", rn(3, 1, 4, 1), {"dim": 0})
    case("unsqueeze", "unsqueeze", rn(3, 4), {"dim": 1})
    case("unsqueeze_neg", "unsqueeze", rn(3, 4), {"dim": -1})
    case("view_f64", "view", rn(2, 3, 4), {"shape": [24]}, dtype=F64)

    def three(sa, sb, sc):
        return lambda dt: {"a": torch.randn(*sa, dtype=dt), "b": torch.randn(*sb, dtype=dt),
                           "c": torch.randn(*sc, dtype=dt)}
    case("cat_dim0", "cat", three((2, 3), (1, 3), (4, 3)), {"dim": 0})
    case("cat_dim1", "cat", three((2, 3, 2), (2, 1, 2), (2, 4, 2)), {"dim": 1})
    case("cat_dim_neg1", "cat", three((2, 3), (2, 1), (2, 2)), {"dim": -1})
    case("cat_f64", "cat", three((2, 3), (2, 1), (2, 2)), {"dim": 1}, dtype=F64)
    case("stack_dim0", "stack", three((2, 3), (2, 3), (2, 3)), {"dim": 0})
    case("stack_dim1", "stack", three((2, 3), (2, 3), (2, 3)), {"dim": 1})
    case("stack_last", "stack", three((2, 3), (2, 3), (2, 3)), {"dim": 2})
    case("stack_neg1", "stack", three((2, 3), (2, 3), (2, 3)), {"dim": -1})
    case("split_size2_dim1", "split", rn(3, 5), {"size": 2, "dim": 1})
    case("split_size2_dim0", "split", rn(7, 2), {"size": 3, "dim": 0})
    case("split_sizes", "split", rn(3, 5), {"sizes": [1, 3, 1], "dim": 1})
    case("split_piece_unused", "split", rn(3, 5), {"size": 2, "dim": 1}, used=[0, 2])
    case("chunk_3_of_7", "chunk", rn(7, 3), {"chunks": 3, "dim": 0})
    case("chunk_dim1", "chunk", rn(2, 6, 2), {"chunks": 2, "dim": 1})
    case("chunk_uneven_4_of_6", "chunk", rn(6, 2), {"chunks": 4, "dim": 0})
    case("chunk_piece_unused", "chunk", rn(7, 3), {"chunks": 3, "dim": 0}, used=[1])


def indexing():
    case("index_select_dim0", "index_select",
         lambda dt: {"x": torch.randn(5, 3, dtype=dt), "index": torch.tensor([4, 0, 2, 0, 4, 4])}, {"dim": 0})
    case("index_select_dim1", "index_select",
         lambda dt: {"x": torch.randn(3, 5, 2, dtype=dt), "index": torch.tensor([1, 3, 1])}, {"dim": 1})
    case("index_select_f64", "index_select",
         lambda dt: {"x": torch.randn(5, 3, dtype=dt), "index": torch.tensor([2, 2, 1])}, {"dim": 0}, dtype=F64)
    case("gather_dim1", "gather", lambda dt: {"x": torch.randn(3, 5, dtype=dt), "index": idx(5, 3, 4)}, {"dim": 1})
    case("gather_dim0", "gather", lambda dt: {"x": torch.randn(4, 3, dtype=dt), "index": idx(4, 6, 3)}, {"dim": 0})
    case("gather_3d_dim2", "gather", lambda dt: {"x": torch.randn(2, 3, 5, dtype=dt), "index": idx(5, 2, 3, 7)},
         {"dim": 2})
    case("gather_smaller_index", "gather", lambda dt: {"x": torch.randn(4, 5, dtype=dt), "index": idx(5, 2, 3)},
         {"dim": 1})

    def sc(xs, dim, src_shape, index):
        return lambda dt: {"x": torch.randn(tuple(xs), dtype=dt), "index": torch.tensor(index),
                           "src": torch.randn(*src_shape, dtype=dt)}
    # indices unique along the scatter dim (duplicates are nondeterministic in PyTorch)
    case("scatter_src_dim1", "scatter", sc((3, 5), 1, (3, 2), [[0, 4], [2, 1], [3, 0]]), {"dim": 1})
    # torch 1.13 cannot backprop into a src larger than index (ScatterBackward0 returns the index's shape):
    # differentiate x only
    case("scatter_src_larger_than_index", "scatter", sc((3, 5), 1, (3, 4), [[0, 4], [2, 1], [3, 0]]), {"dim": 1},
         grad=["x"])
    case("scatter_src_dim0", "scatter", sc((4, 3), 0, (2, 3), [[0, 3, 1], [2, 0, 3]]), {"dim": 0})
    case("scatter_value", "scatter",
         lambda dt: {"x": torch.randn(3, 5, dtype=dt), "index": torch.tensor([[0, 4], [2, 1], [3, 0]])},
         {"dim": 1, "value": 1.5})
    case("one_hot_1d", "one_hot", lambda dt: {"idx": torch.tensor([0, 3, 1, 4, 1, 2])}, {"num_classes": 5})
    case("one_hot_infer", "one_hot", lambda dt: {"idx": torch.tensor([0, 3, 1, 2])}, {"num_classes": -1})
    case("one_hot_2d", "one_hot", lambda dt: {"idx": idx(4, 2, 3)}, {"num_classes": 4})


def losses():
    def nl(xs, c, weight=False, ignore=None, logp=True):
        def make(dt):
            x = torch.randn(tuple(xs), dtype=dt)
            if logp:
                x = F.log_softmax(x, 1)
            ts = (xs[0],) + tuple(xs[2:])
            tgt = torch.randint(0, c, ts)
            if ignore is not None:
                tgt.view(-1)[::3] = ignore
            d = {"x": x, "target": tgt}
            if weight:
                d["weight"] = torch.rand(c, dtype=dt) + 0.5
            return d
        return make

    for op, logp in (("nll_loss", True), ("cross_entropy", False)):
        for red in ("mean", "sum", "none"):
            p = {"reduction": red, "ignore_index": -100}
            case(op + "_" + red, op, nl((6, 5), 5, logp=logp), p)
            case(op + "_" + red + "_weight", op, nl((6, 5), 5, weight=True, logp=logp), p)
            case(op + "_" + red + "_ignore2", op, nl((6, 5), 5, ignore=2, logp=logp),
                 {"reduction": red, "ignore_index": 2})
            case(op + "_" + red + "_weight_ignore_neg100", op, nl((6, 5), 5, weight=True, ignore=-100, logp=logp), p)
            case(op + "_" + red + "_4d_weight", op, nl((2, 4, 3, 3), 4, weight=True, logp=logp), p)
        case(op + "_mean_4d", op, nl((2, 4, 3, 3), 4, logp=logp), {"reduction": "mean", "ignore_index": -100})
        case(op + "_mean_4d_ignore1", op, nl((2, 4, 3, 3), 4, ignore=1, logp=logp),
             {"reduction": "mean", "ignore_index": 1})
        case(op + "_mean_weight_f64", op, nl((6, 5), 5, weight=True, logp=logp),
             {"reduction": "mean", "ignore_index": -100}, dtype=F64)
    case("cross_entropy_large_logits", "cross_entropy",
         lambda dt: {"x": torch.randn(4, 6, dtype=dt) * 100, "target": torch.randint(0, 6, (4,))},
         {"reduction": "mean", "ignore_index": -100})

    def ms(*shape):
        return lambda dt: {"x": torch.randn(tuple(shape), dtype=dt), "target": torch.randn(tuple(shape), dtype=dt)}
    for red in ("mean", "sum", "none"):
        case("mse_loss_" + red, "mse_loss", ms(3, 4, 5), {"reduction": red})
    case("mse_loss_mean_f64", "mse_loss", ms(3, 4, 5), {"reduction": "mean"}, dtype=F64)


def edge_cases():
    """Boundary values: zeros at kinks, NaN/inf propagation, empty tensors, degenerate geometries."""
    nan, inf = float("nan"), float("inf")

    def fixed(values, shape=None):
        def make(dt):
            x = torch.tensor(values, dtype=dt)
            return {"x": x if shape is None else x.view(shape)}
        return make
    case("pow_scalar_2_at_zero", "pow", fixed([0.0, -1.5, 2.0, 0.0]), {"exponent": 2.0})
    case("pow_scalar_0_at_zero", "pow", fixed([0.0, -1.5, 2.0, 0.0]), {"exponent": 0.0})
    case("pow_scalar_half_at_zero", "pow", fixed([0.0, 1.5, 2.0, 0.25]), {"exponent": 0.5})
    case("pow_tensor_zero_base", "pow",
         lambda dt: {"x": torch.tensor([0.0, 0.0, 1.5, 2.0, 0.0], dtype=dt),
                     "other": torch.tensor([2.0, 0.5, 0.0, -1.0, 0.0], dtype=dt)},
         note="d/dx x^e is 0 where e == 0, also at x == 0 (pow_backward_self masks it; 0 * 0^-1 would be NaN);"
              " d/de x^e is 0 where x == 0 and e >= 0")
    case("sqrt_at_zero", "sqrt", fixed([0.0, 1.0, 4.0, 0.0]))
    case("log_at_zero", "log", fixed([0.0, 1.0, 4.0, 0.5]))
    case("relu_nan_propagates", "relu", fixed([nan, -1.0, 2.0, 0.5]),
         note="relu(NaN) is NaN, and its backward (threshold_backward: result <= 0 ? 0 : grad) passes the"
              " gradient through at NaN")
    case("clamp_nan_propagates", "clamp", fixed([nan, -1.0, 2.0, 0.5]), {"min": 0.0, "max": 1.0})
    case("max_all_nan_propagates", "max", fixed([1.0, nan, 3.0, 0.5, -2.0, 1.5], (2, 3)),
         {"dim": None, "keepdim": False},
         note="the full max is NaN and its gradient goes (evenly) to the NaN elements, zero elsewhere")
    case("max_dim_nan_propagates", "max", fixed([1.0, nan, 3.0, 0.5, -2.0, 1.5], (2, 3)),
         {"dim": 1, "keepdim": False})
    case("min_dim_nan_propagates", "min", fixed([1.0, nan, -3.0, 0.5, -2.0, 1.5], (2, 3)),
         {"dim": 1, "keepdim": False})
    case("argmax_nan_is_max", "argmax", fixed([1.0, nan, 3.0, 0.5, -2.0, 1.5], (2, 3)),
         {"dim": 1, "keepdim": False})
    case("max_all_with_inf", "max", fixed([1.0, inf, 3.0, -inf], (2, 2)), {"dim": None, "keepdim": False})
    case("max_pool2d_nan_propagates", "max_pool2d",
         lambda dt: {"x": torch.where(torch.arange(16).view(1, 1, 4, 4) == 5, nan, torch.randn(1, 1, 4, 4)).to(dt)},
         {"kernel": [2, 2], "stride": None, "padding": [0, 0], "ceil_mode": False})
    case("softmax_with_neg_inf", "softmax", fixed([1.0, -inf, 0.5, 2.0, -inf, -1.0], (2, 3)), {"dim": 1})
    case("log_softmax_with_neg_inf", "log_softmax", fixed([1.0, -inf, 0.5, 2.0, -inf, -1.0], (2, 3)), {"dim": 1})
    case("softmax_1d", "softmax", rn(6), {"dim": 0})
    case("log_softmax_1d", "log_softmax", rn(6), {"dim": 0})
    case("sum_0d", "sum", lambda dt: {"x": torch.tensor(1.25, dtype=dt)}, {"dims": None, "keepdim": False})
    case("expand_0d", "expand", lambda dt: {"x": torch.tensor(1.25, dtype=dt)}, {"shape": [2, 3]})
    case("mul_0d_0d", "mul", rn2((), ()))
    case("cat_with_empty", "cat", lambda dt: {"a": torch.randn(2, 3, dtype=dt), "b": torch.randn(0, 3, dtype=dt),
                                              "c": torch.randn(1, 3, dtype=dt)}, {"dim": 0})
    case("gather_neg_dim", "gather", lambda dt: {"x": torch.randn(3, 5, dtype=dt), "index": idx(5, 3, 2)},
         {"dim": -1})
    case("index_select_neg_dim", "index_select",
         lambda dt: {"x": torch.randn(3, 5, dtype=dt), "index": torch.tensor([4, 4, 0])}, {"dim": -1})
    case("max_dim1_keepdim_ties", "max", lambda dt: {"x": torch.randint(0, 2, (3, 6)).to(dt)},
         {"dim": 1, "keepdim": True})

    def mk(xs, ws):
        return lambda dt: {"x": torch.randn(*xs, dtype=dt), "w": torch.randn(*ws, dtype=dt) * 0.3,
                           "b": torch.randn(ws[0], dtype=dt)}
    case("conv2d_padding_exceeds_kernel", "conv2d", mk((1, 2, 5, 5), (3, 2, 3, 3)),
         {"stride": [1, 1], "padding": [3, 3], "dilation": [1, 1], "groups": 1})
    case("conv2d_kernel_covers_input", "conv2d", mk((2, 3, 4, 4), (5, 3, 4, 4)),
         {"stride": [1, 1], "padding": [0, 0], "dilation": [1, 1], "groups": 1})
    # ceil_mode where the last window would start in the right padding: PyTorch drops it (5x5, k3 s3 p1 -> 2x2)
    pool = {"kernel": [3, 3], "stride": [3, 3], "padding": [1, 1], "ceil_mode": True}
    case("max_pool2d_ceil_last_window_in_padding", "max_pool2d", rn(1, 2, 5, 5), pool)
    case("avg_pool2d_ceil_last_window_in_padding", "avg_pool2d", rn(1, 2, 5, 5), {**pool, "count_include_pad": True})
    case("avg_pool2d_ceil_last_window_in_padding_exclude", "avg_pool2d", rn(1, 2, 5, 5),
         {**pool, "count_include_pad": False})

    def nl(x, t, c):
        return lambda dt: {"x": F.log_softmax(torch.randn(*x, dtype=dt), 1), "target": torch.tensor(t)}
    # every target ignored: PyTorch's mean is 0/0 = nan, its gradient zero
    case("nll_loss_mean_all_ignored", "nll_loss", nl((3, 4), [1, 1, 1], 4), {"reduction": "mean", "ignore_index": 1},
         note="with every target ignored the mean loss is 0/0 = NaN but the input gradient is all zeros")
    case("cross_entropy_mean_all_ignored", "cross_entropy",
         lambda dt: {"x": torch.randn(2, 4, dtype=dt), "target": torch.tensor([-100, -100])},
         {"reduction": "mean", "ignore_index": -100},
         note="with every target ignored (a batch of padding) the mean loss is 0/0 = NaN but the logits'"
              " gradient is all zeros")
    case("nll_loss_sum_all_ignored", "nll_loss", nl((3, 4), [1, 1, 1], 4), {"reduction": "sum", "ignore_index": 1})
    # dtype promotion (forward and the dtype of each gradient)
    case("add_f32_with_f64_0d_keeps_f32", "add",
         lambda dt: {"x": torch.randn(3, 4, dtype=F32), "other": torch.tensor(1.5, dtype=F64)},
         note="a 0-d tensor does not promote a higher-dimensional tensor of the same category:"
              " float32 [3,4] + float64 0-d is float32 (the 0-d operand's gradient stays float64)")
    case("mul_int64_with_f32", "mul",
         lambda dt: {"x": torch.randint(-5, 5, (3, 4)), "other": torch.randn(4, dtype=F32)})
    case("mul_int64_by_float_scalar", "mul", lambda dt: {"x": torch.randint(-5, 5, (3, 4))}, {"scalar": 2.5},
         note="int64 tensor * Python float is float32")
    case("add_int64_float_scalar", "add", lambda dt: {"x": torch.randint(-5, 5, (3, 4))}, {"scalar": 0.5},
         note="int64 tensor + Python float is float32")
    case("div_int64_int64_true_division", "div",
         lambda dt: {"x": torch.randint(-9, 9, (3, 4)), "other": torch.randint(1, 5, (3, 4))})
    case("sum_int64", "sum", lambda dt: {"x": torch.randint(-9, 9, (3, 4))}, {"dims": [1], "keepdim": False})
    case("max_int64", "max", lambda dt: {"x": torch.randint(-9, 9, (3, 4))}, {"dim": 1, "keepdim": False})
    # degenerate shapes and negative dims
    case("softmax_dim_of_size_1", "softmax", rn(4, 1), {"dim": 1})
    case("log_softmax_dim_of_size_1", "log_softmax", rn(4, 1), {"dim": 1})
    case("sum_dims_unordered_negative", "sum", rn(3, 4, 5), {"dims": [-1, 0], "keepdim": True})
    case("index_select_empty_index", "index_select",
         lambda dt: {"x": torch.randn(3, 5, dtype=dt), "index": torch.tensor([], dtype=torch.int64)}, {"dim": 0})
    case("split_size_exceeds_dim", "split", rn(3, 4), {"size": 10, "dim": 1})
    case("chunk_more_chunks_than_size", "chunk", rn(3, 4), {"chunks": 5, "dim": 0})
    case("squeeze_neg_dim", "squeeze", rn(3, 4, 1), {"dim": -1})
    case("permute_neg_dims", "permute", rn(2, 3, 4), {"dims": [-1, 0, 1]})
    case("flatten_0d", "flatten", lambda dt: {"x": torch.tensor(0.5, dtype=dt)}, {"start": 0, "end": -1})
    case("unsqueeze_0d", "unsqueeze", lambda dt: {"x": torch.tensor(0.5, dtype=dt)}, {"dim": 0})
    case("stack_0d", "stack", lambda dt: {n: torch.randn((), dtype=dt) for n in ("a", "b", "c")}, {"dim": 0})
    case("cross_entropy_3d_input", "cross_entropy",
         lambda dt: {"x": torch.randn(2, 4, 5, dtype=dt), "target": torch.randint(0, 4, (2, 5))},
         {"reduction": "mean", "ignore_index": -100})


def main():
    if os.path.isdir(ROOT):
        shutil.rmtree(ROOT)
    os.makedirs(ROOT)
    torch.set_num_threads(1)
    elementwise()
    linalg()
    reductions()
    conv()
    pooling()
    batchnorm()
    views()
    indexing()
    losses()
    edge_cases()
    with open(os.path.join(ROOT, "cases.json"), "w") as f:
        json.dump({"generator": "tools/make_parity_data.py", "torch": torch.__version__, "cases": CASES}, f,
                  indent=1)
        f.write("\n")
    total = sum(os.path.getsize(os.path.join(dp, fn)) for dp, _, fns in os.walk(ROOT) for fn in fns)
    print("%d cases, %.2f MB in %s" % (len(CASES), total / 1e6, os.path.normpath(ROOT)))


if __name__ == "__main__":
    main()
