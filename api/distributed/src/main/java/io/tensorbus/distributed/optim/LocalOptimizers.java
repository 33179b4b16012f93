package io.tensorbus.distributed.optim;

import io.tensorbus.distributed.rpc.RRef;
import io.tensorbus.distributed.rpc.RpcAgent;
import io.tensorbus.distributed.rpc.RpcFunctionLibrary;
import io.tensorbus.distributed.rpc.RpcRegistry;
import io.tensorbus.optim.OptimizerState;
import io.tensorbus.tensor.Tensor;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The functions a {@link DistributedOptimizer} calls on the workers that own parameters, registered in every
 * {@link RpcRegistry} through {@link java.util.ServiceLoader}: make a local optimizer over RRefs to values the
 * worker owns (answering an RRef to it), step it with a context's gradients, read or replace its state, and
 * free it.
 *
 * <p>Every RRef that arrives as an argument is a handle of its own on this worker, closed as soon as its value
 * was read, so that nothing waits for the garbage collector; the handle {@code RRef.of} opened for a new local
 * optimizer is kept until {@link DistributedOptimizer#close()} frees it.
 */
public final class LocalOptimizers implements RpcFunctionLibrary {
    /** {@code [optimizer, options, [RRef<Tensor>...]]} to {@code RRef<LocalOptimizer>}. */
    static final String NEW = "dist_optim.new";
    /** {@code [RRef<LocalOptimizer>, contextId]}: one step with the context's gradients. */
    static final String STEP = "dist_optim.step";
    /** {@code [RRef<LocalOptimizer>]} to {@code [state tensors, param groups]}. */
    static final String STATE = "dist_optim.state";
    /** {@code [RRef<LocalOptimizer>, state tensors, param groups]}: replaces its state. */
    static final String LOAD = "dist_optim.load";
    /** {@code [RRef<LocalOptimizer>]}: closes the owner's own handle (the users' references still hold it). */
    static final String FREE = "dist_optim.free";

    /** The handles {@code RRef.of} opened for the local optimizers this registry made, by identity of the optimizer. */
    private final Map<LocalOptimizer, RRef<LocalOptimizer>> own = new ConcurrentHashMap<>();

    /** Made by {@link java.util.ServiceLoader}. */
    public LocalOptimizers() {
    }

    @Override
    public void registerInto(RpcRegistry registry) {
        registry.register(NEW, this::create)
                .register(STEP, args -> {
                    RpcAgent agent = RpcAgent.current();
                    local(args, 2).step(agent.distAutograd().getGradients(number(args.get(1))));
                    return null;
                })
                .register(STATE, args -> {
                    OptimizerState s = local(args, 1).stateDict();
                    return Arrays.asList(s.toTensorMap(), s.paramGroups());
                })
                .register(LOAD, args -> {
                    check(args, 3);
                    local(args, 3).loadStateDict(state(args.get(1), args.get(2)));
                    return null;
                })
                .register(FREE, args -> {
                    RRef<LocalOptimizer> handle = own.remove(local(args, 1));
                    if (handle != null) {
                        handle.close();
                    }
                    return null;
                });
    }

    @SuppressWarnings("unchecked")
    private Object create(List<Object> args) {
        check(args, 3);
        if (!(args.get(0) instanceof String name) || !(args.get(1) instanceof Map<?, ?> options)
                || !(args.get(2) instanceof List<?> rrefs)) {
            throw new IllegalArgumentException(NEW + " takes [optimizer name, options, parameter RRefs]");
        }
        RpcAgent agent = RpcAgent.current();
        List<Tensor> params = new ArrayList<>();
        for (Object o : rrefs) {
            if (!(o instanceof RRef<?> r) || !r.isOwner() || !(r.localValue() instanceof Tensor t)) {
                throw new IllegalArgumentException("a parameter of a local optimizer on " + agent.self()
                        + " is not an RRef to a tensor it owns: " + o);
            }
            params.add(t);
        }
        rrefs.forEach(o -> ((RRef<?>) o).close());
        OptimizerSpec spec = new OptimizerSpec(name, (Map<String, Object>) options);
        LocalOptimizer local = new LocalOptimizer(spec.build(params));
        RRef<LocalOptimizer> handle = RRef.of(agent, local);
        own.put(local, handle);
        return handle;
    }

    private static LocalOptimizer local(List<Object> args, int size) {
        check(args, size);
        if (!(args.get(0) instanceof RRef<?> r) || !r.isOwner() || !(r.localValue() instanceof LocalOptimizer o)) {
            throw new IllegalArgumentException("not an RRef to a local optimizer of this worker: " + args.get(0));
        }
        r.close();
        return o;
    }

    @SuppressWarnings("unchecked")
    private static OptimizerState state(Object tensors, Object groups) {
        if (!(tensors instanceof Map<?, ?> t) || !(groups instanceof List<?> g)) {
            throw new IllegalArgumentException(LOAD + " takes [local optimizer, state tensors, param groups]");
        }
        return OptimizerState.fromFlat((Map<String, Tensor>) t, (List<Map<String, Object>>) g);
    }

    private static long number(Object o) {
        if (o instanceof Long l) {
            return l;
        }
        throw new IllegalArgumentException("a context id is a long, got " + o);
    }

    private static void check(List<Object> args, int size) {
        if (args.size() != size) {
            throw new IllegalArgumentException("expected " + size + " arguments, got " + args.size());
        }
    }
}
