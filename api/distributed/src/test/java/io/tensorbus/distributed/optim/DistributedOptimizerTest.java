package io.tensorbus.distributed.optim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tensorbus.distributed.autograd.DistAutograd;
import io.tensorbus.distributed.autograd.Golden;
import io.tensorbus.distributed.rpc.RRef;
import io.tensorbus.distributed.rpc.RemoteException;
import io.tensorbus.distributed.rpc.RpcAgent;
import io.tensorbus.distributed.rpc.RpcOptions;
import io.tensorbus.distributed.rpc.RpcRegistry;
import io.tensorbus.distributed.rpc.RpcWorkers;
import io.tensorbus.nn.Functional;
import io.tensorbus.nn.Linear;
import io.tensorbus.nn.Module;
import io.tensorbus.nn.ReLU;
import io.tensorbus.nn.Sequential;
import io.tensorbus.optim.OptimizerState;
import io.tensorbus.tensor.Tensor;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The distributed optimizer on PyTorch's values: the seed's example and a two-stage model-parallel MLP, each
 * through one SGD and one Adam step, made by {@code tools/make_dist_autograd_data.py}.
 */
class DistributedOptimizerTest {
    private static final String STAGE = "stage.net.";
    private RpcWorkers workers;

    /** worker1's functions for the MLP's second stage, which it owns and runs on an RRef of its input. */
    private static RpcRegistry registry() {
        return new RpcRegistry()
                .register("test.my_add", args -> ((Tensor) args.get(0)).add((Tensor) args.get(1)))
                .register("test.stage.new", args -> {
                    @SuppressWarnings("unchecked")
                    Map<String, Tensor> state = (Map<String, Tensor>) args.get(0);
                    Module net = new Sequential(new Linear(32, 32), new ReLU(), new Linear(32, 10));
                    net.loadStateDict(state, true);
                    return RRef.of(RpcAgent.current(), net);
                })
                .register("test.stage.forward", args -> {
                    Tensor x = ((RRef<Tensor>) args.get(1)).toHere();
                    return stage(args).forward(x);
                })
                .register("test.stage.params", args -> {
                    List<RRef<Tensor>> out = new ArrayList<>();
                    stage(args).parameters().forEach(p -> out.add(RRef.of(RpcAgent.current(), p)));
                    return out;
                })
                .register("test.stage.grads", args -> {
                    Map<Tensor, Tensor> grads = RpcAgent.current().distAutograd().getGradients((Long) args.get(1));
                    Map<String, Tensor> out = new LinkedHashMap<>();
                    stage(args).namedParameters().forEach((k, p) -> out.put(k, grads.get(p)));
                    return out;
                })
                .register("test.stage.named", args -> {
                    Map<String, Tensor> out = new LinkedHashMap<>();
                    stage(args).namedParameters().forEach((k, p) -> out.put(k, p.detach().clone()));
                    return out;
                });
    }

    @SuppressWarnings("unchecked")
    private static Module stage(List<Object> args) {
        return ((RRef<Module>) args.get(0)).localValue();
    }

    private RpcAgent start() throws Exception {
        workers = new RpcWorkers().start(2, r -> RpcOptions.builder().registry(registry())
                .timeout(Duration.ofSeconds(20)));
        return workers.get(0);
    }

    @AfterEach
    void stop() throws Exception {
        if (workers != null) {
            workers.close();
        }
    }

    @Test
    void theSeedsExampleStepsAsPyTorchsSgdAndAdam() throws Exception {
        Map<String, Tensor> g = Golden.load("seed.safetensors");
        RpcAgent w0 = start();
        DistAutograd dist = w0.distAutograd();
        for (String name : List.of("sgd", "adam")) {
            Tensor t1 = g.get("t1").clone().requiresGrad(true);
            Tensor t2 = g.get("t2").clone().requiresGrad(true);
            Tensor t4 = g.get("t4").clone().requiresGrad(true);
            OptimizerSpec spec = name.equals("sgd") ? OptimizerSpec.sgd(0.05) : OptimizerSpec.adam(0.01);
            try (DistributedOptimizer opt = DistributedOptimizer.create(w0, spec,
                    List.of(RRef.of(w0, t1), RRef.of(w0, t2), RRef.of(w0, t4)));
                 DistAutograd.Context context = dist.context()) {
                Tensor t3 = w0.rpcSync("worker1", "test.my_add", t1, t2);
                dist.backward(context.id(), List.of(t3.mul(t4).sum()));
                opt.step(context.id());
            }
            Golden.close(g.get(name + ".t1"), t1, name + " t1");
            Golden.close(g.get(name + ".t2"), t2, name + " t2");
            Golden.close(g.get(name + ".t4"), t4, name + " t4");
        }
    }

    @Test
    void aTwoStageModelParallelMlpStepsAsPyTorch() throws Exception {
        Map<String, Tensor> g = Golden.load("mlp.safetensors");
        RpcAgent w0 = start();
        DistAutograd dist = w0.distAutograd();
        for (String name : List.of("sgd", "adam")) {
            Linear first = new Linear(16, 32);
            first.loadStateDict(Map.of("weight", g.get("first.weight"), "bias", g.get("first.bias")), true);
            RRef<Module> stage = w0.rpcSync("worker1", "test.stage.new", withoutPrefix(g, STAGE));
            List<RRef<Tensor>> params = new ArrayList<>(List.of(RRef.of(w0, first.weight()),
                    RRef.of(w0, first.bias())));
            params.addAll(w0.<List<RRef<Tensor>>>rpcSync("worker1", "test.stage.params", stage));
            OptimizerSpec spec = name.equals("sgd") ? OptimizerSpec.sgd(0.01) : OptimizerSpec.adam(0.01);
            try (DistributedOptimizer opt = DistributedOptimizer.create(w0, spec, params);
                 DistAutograd.Context context = dist.context()) {
                Tensor h = Functional.relu(first.forward(g.get("x")));
                Tensor logits = w0.rpcSync("worker1", "test.stage.forward", stage, RRef.of(w0, h));
                Tensor loss = Functional.crossEntropy(logits, g.get("y"));
                Golden.close(g.get("loss"), loss.reshape(1), "loss");
                dist.backward(context.id(), List.of(loss));
                Map<Tensor, Tensor> grads = dist.getGradients(context.id());
                Golden.close(g.get("grad.first.weight"), grads.get(first.weight()), "grad first.weight");
                Golden.close(g.get("grad.first.bias"), grads.get(first.bias()), "grad first.bias");
                Map<String, Tensor> there = w0.rpcSync("worker1", "test.stage.grads", stage, context.id());
                there.forEach((k, v) -> Golden.close(g.get("grad." + STAGE + k), v, "grad " + STAGE + k));
                assertEquals(4, there.size());
                opt.step(context.id());
                assertEquals(2, opt.stateDict().size(), "a local optimizer on each owner");
            }
            Golden.close(g.get(name + ".first.weight"), first.weight(), name + " first.weight");
            Golden.close(g.get(name + ".first.bias"), first.bias(), name + " first.bias");
            Map<String, Tensor> after = w0.rpcSync("worker1", "test.stage.named", stage);
            after.forEach((k, v) -> Golden.close(g.get(name + "." + STAGE + k), v, name + " " + STAGE + k));
            stage.close();
        }
    }

    @Test
    void stateDictsComeBackAndLoadIntoTheOwners() throws Exception {
        RpcAgent w0 = start();
        DistAutograd dist = w0.distAutograd();
        Tensor p = Tensor.rand(4).requiresGrad(true);
        try (DistributedOptimizer opt = DistributedOptimizer.create(w0, OptimizerSpec.adam(0.1),
                List.of(RRef.of(w0, p)));
             DistAutograd.Context context = dist.context()) {
            Tensor r = w0.rpcSync("worker1", "test.my_add", p, p);
            dist.backward(context.id(), List.of(r.sum()));
            opt.step(context.id());
            var states = opt.stateDict();
            OptimizerState s = states.get(w0.self());
            assertTrue(s.state().get(0).containsKey("exp_avg"), "Adam's moments are in the state: " + s.state());
            opt.loadStateDictAsync(states).await(10, TimeUnit.SECONDS);
        }
    }

    @Test
    void badOptionsAndUnknownContextsFailNamingTheOwner() throws Exception {
        RpcAgent w0 = start();
        Tensor p = Tensor.rand(4).requiresGrad(true);
        RuntimeException bad = assertThrows(RuntimeException.class, () -> DistributedOptimizer.create(w0,
                OptimizerSpec.sgd(-1.0), List.of(RRef.of(w0, p))));
        assertTrue(bad.getMessage().contains("lr") || bad.getMessage().contains("learning rate"), bad.getMessage());
        assertThrows(IllegalArgumentException.class, () -> new OptimizerSpec("LBFGS", Map.of()));
        assertThrows(IllegalArgumentException.class, () -> DistributedOptimizer.create(w0, OptimizerSpec.sgd(0.1),
                List.of()));
        try (DistributedOptimizer opt = DistributedOptimizer.create(w0, OptimizerSpec.sgd(0.1),
                List.of(RRef.of(w0, p)))) {
            IllegalArgumentException here = assertThrows(IllegalArgumentException.class, () -> opt.step(777L));
            assertTrue(here.getMessage().contains("no distributed autograd context"), here.getMessage());
            RemoteException unknown = assertThrows(RemoteException.class,
                    () -> opt.stepAsync(777L).await(10, TimeUnit.SECONDS));
            assertTrue(unknown.getMessage().contains("no distributed autograd context"), unknown.getMessage());
        }
    }

    private static Map<String, Tensor> withoutPrefix(Map<String, Tensor> all, String prefix) {
        Map<String, Tensor> out = new LinkedHashMap<>();
        all.forEach((k, v) -> {
            if (k.startsWith(prefix)) {
                out.put(k.substring(prefix.length()), v);
            }
        });
        return out;
    }
}
