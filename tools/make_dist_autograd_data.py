"""Writes the golden values of tensorbus's distributed autograd tests (issue 14) with Debian's PyTorch 1.13.

    /usr/bin/python3 tools/make_dist_autograd_data.py

Two workers over TensorPipe on loopback, as tools/anchors/torch_dist_autograd.py, run the computations
through torch.distributed.autograd and DistributedOptimizer, and worker0 writes what they produced under
api/distributed/src/test/resources/dist_autograd/ as safetensors (little-endian float32, int64 for labels):

seed.safetensors: the seed's example (seeds/001, 0x05): t1, t2, t4 = rand(3, 3) on worker0,
  t3 = rpc_sync(worker1, my_add, t1, t2), loss = (t3 * t4).sum(); the gradients get_gradients returns
  (grad.t1, grad.t2, grad.t4), and t1, t2, t4 after one DistributedOptimizer step of SGD(lr=0.05)
  (sgd.*) and, from the same start, of Adam(lr=0.01) (adam.*).
mlp.safetensors: a two-stage model-parallel MLP: first = Linear(16, 32) on worker0, h = relu(first(x)),
  worker1's Stage (Linear(32, 32), ReLU, Linear(32, 10)) called through an RRef of h that it fetches with
  to_here, loss = cross_entropy(out, y); x (8x16), y, the initial parameters (first.*, stage.net.*), loss,
  every gradient of both workers' contexts (grad.*), and the parameters after one SGD(lr=0.01) step (sgd.*)
  and, from the same start, one Adam(lr=0.01) step (adam.*).
builtin.safetensors: builtins recorded like any function (issue 32): a, b, c = rand(3, 3) on worker0,
  d = rpc_sync(worker1, torch.add, (a, b)), e = rpc_sync(worker1, torch.mul, (d, c)),
  f = rpc_sync(worker1, torch.add, (e, 0.5)), loss = (f * f).sum(); loss and the gradients of a, b and c.
"""
import os

import torch
import torch.distributed.autograd as dist_autograd
import torch.distributed.rpc as rpc
import torch.multiprocessing as mp
from torch import nn, optim
from torch.distributed.optim import DistributedOptimizer

import safetensors_out

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "api", "distributed", "src", "test",
                   "resources", "dist_autograd")


def save_safetensors(name, tensors):
    safetensors_out.save_safetensors(OUT, name, tensors)


def my_add(t1, t2):
    return torch.add(t1, t2)


class Stage(nn.Module):
    """The second stage, on worker1; its input arrives as an RRef that it fetches inside the context."""

    def __init__(self, state):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, 10))
        self.net.load_state_dict(state)

    def forward(self, x_rref):
        return self.net(x_rref.to_here())

    def parameter_rrefs(self):
        return [rpc.RRef(p) for p in self.parameters()]

    def named(self):
        return {"stage.net." + k: v.detach().clone() for k, v in self.net.state_dict().items()}

    def gradients(self, context_id):
        grads = dist_autograd.get_gradients(context_id)
        return {"stage.net." + k: grads[p].clone() for k, p in self.net.named_parameters()}


def seed_case():
    torch.manual_seed(0)
    start = [torch.rand((3, 3)) for _ in range(3)]
    out = {"t1": start[0], "t2": start[1], "t4": start[2]}
    for name, make in (("sgd", lambda ps: DistributedOptimizer(optim.SGD, ps, lr=0.05)),
                       ("adam", lambda ps: DistributedOptimizer(optim.Adam, ps, lr=0.01))):
        t1, t2, t4 = (s.clone().requires_grad_(True) for s in start)
        opt = make([rpc.RRef(t1), rpc.RRef(t2), rpc.RRef(t4)])
        with dist_autograd.context() as ctx:
            t3 = rpc.rpc_sync("worker1", my_add, args=(t1, t2))
            loss = torch.mul(t3, t4).sum()
            dist_autograd.backward(ctx, [loss])
            grads = dist_autograd.get_gradients(ctx)
            opt.step(ctx)
        out.update({"t3": t3.detach(), "loss": loss.detach().reshape(1), "grad.t1": grads[t1],
                    "grad.t2": grads[t2], "grad.t4": grads[t4]})
        out.update({f"{name}.t1": t1.detach(), f"{name}.t2": t2.detach(), f"{name}.t4": t4.detach()})
    save_safetensors("seed.safetensors", out)


def builtin_case():
    torch.manual_seed(2)
    a, b, c = (torch.rand((3, 3)).requires_grad_(True) for _ in range(3))
    with dist_autograd.context() as ctx:
        d = rpc.rpc_sync("worker1", torch.add, args=(a, b))
        e = rpc.rpc_sync("worker1", torch.mul, args=(d, c))
        f = rpc.rpc_sync("worker1", torch.add, args=(e, 0.5))
        loss = (f * f).sum()
        dist_autograd.backward(ctx, [loss])
        grads = dist_autograd.get_gradients(ctx)
        out = {"a": a.detach(), "b": b.detach(), "c": c.detach(), "loss": loss.detach().reshape(1),
               "grad.a": grads[a], "grad.b": grads[b], "grad.c": grads[c]}
    save_safetensors("builtin.safetensors", out)


def mlp_case():
    torch.manual_seed(1)
    first_state = nn.Linear(16, 32).state_dict()
    stage_state = nn.Sequential(nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, 10)).state_dict()
    x, y = torch.randn(8, 16), torch.randint(0, 10, (8,))
    out = {"x": x, "y": y}
    out.update({"first." + k: v.clone() for k, v in first_state.items()})
    out.update({"stage.net." + k: v.clone() for k, v in stage_state.items()})
    for name, opt_class in (("sgd", optim.SGD), ("adam", optim.Adam)):
        first = nn.Linear(16, 32)
        first.load_state_dict(first_state)
        stage = rpc.remote("worker1", Stage, args=(stage_state,))
        params = [rpc.RRef(p) for p in first.parameters()] + stage.rpc_sync().parameter_rrefs()
        opt = DistributedOptimizer(opt_class, params, lr=0.01)
        with dist_autograd.context() as ctx:
            h = torch.relu(first(x))
            logits = stage.rpc_sync().forward(rpc.RRef(h))
            loss = nn.functional.cross_entropy(logits, y)
            dist_autograd.backward(ctx, [loss])
            grads = dist_autograd.get_gradients(ctx)
            out["loss"] = loss.detach().reshape(1)
            out.update({"grad.first." + k: grads[p].clone() for k, p in first.named_parameters()})
            out.update({"grad." + k: v for k, v in stage.rpc_sync().gradients(ctx).items()})
            opt.step(ctx)
        out.update({f"{name}.first." + k: v.detach().clone() for k, v in first.state_dict().items()})
        out.update({f"{name}." + k: v for k, v in stage.rpc_sync().named().items()})
    save_safetensors("mlp.safetensors", out)


def run(rank, world):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = "29681"
    torch.set_num_threads(1)
    opts = rpc.TensorPipeRpcBackendOptions(num_worker_threads=8, rpc_timeout=120)
    rpc.init_rpc(f"worker{rank}", rank=rank, world_size=world, rpc_backend_options=opts)
    if rank == 0:
        seed_case()
        mlp_case()
        builtin_case()
    rpc.shutdown()


if __name__ == "__main__":
    mp.spawn(run, args=(2,), nprocs=2)
    print("wrote", sorted(os.listdir(OUT)))
