package io.tensorbus.distributed.rpc;

import io.tensorbus.tensor.Tensor;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.ServiceLoader;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The functions other workers may call, by name. Only what is registered here is callable: a message can
 * name a function, never a class or method. {@link #global()} is the process-wide registry agents use by
 * default; it starts with the builtins {@code builtin.echo}, {@code builtin.add} and {@code builtin.mul}
 * (tensors or numbers, as {@code torch.add} / {@code torch.mul}; inside a distributed autograd context their tensor
 * results are part of the graph, as any function's) and the functions of the libraries on the class path
 * ({@link RpcFunctionLibrary}).
 */
public final class RpcRegistry {
    private static final RpcRegistry GLOBAL = new RpcRegistry();

    private final Map<String, RpcAsyncFunction> async = new ConcurrentHashMap<>();
    private final Map<String, SyncFunction> sync = new ConcurrentHashMap<>();

    /** A synchronous function, and whether it runs on the event loop that read its call. */
    record SyncFunction(RpcFunction function, boolean onEventLoop) {
    }

    /** An empty registry but for the builtins and the functions of the {@link RpcFunctionLibrary}s found. */
    public RpcRegistry() {
        register("builtin.echo", args -> args.size() == 1 ? args.get(0) : args);
        register("builtin.add", args -> arithmetic("builtin.add", args, true));
        register("builtin.mul", args -> arithmetic("builtin.mul", args, false));
        ServiceLoader.load(RpcFunctionLibrary.class, RpcRegistry.class.getClassLoader())
                .forEach(library -> library.registerInto(this));
    }

    /** The process-wide registry. */
    public static RpcRegistry global() {
        return GLOBAL;
    }

    /**
     * Makes {@code function} callable as {@code name}, replacing an earlier registration of that name.
     *
     * @return this registry
     * @throws IllegalArgumentException for a name that is blank, longer than 128 characters, has white space or
     *     starts with {@code tensorbus.}
     * @throws NullPointerException when {@code function} is null
     */
    public RpcRegistry register(String name, RpcFunction function) {
        return registerSync(name, function, false);
    }

    private RpcRegistry registerSync(String name, RpcFunction function, boolean onEventLoop) {
        RpcChecks.function(name);
        reserved(name);
        Objects.requireNonNull(function, "function");
        async.remove(name);
        // One entry: a call never sees this function with the other registration's place to run.
        sync.put(name, new SyncFunction(function, onEventLoop));
        return this;
    }

    /**
     * Makes {@code function} callable as {@code name}, run on the callee's event loop that read the call instead of a
     * thread of the worker's pool, replacing an earlier registration of that name. For short functions that never
     * block (arithmetic on small values, a lookup in a concurrent map), as a Vert.x handler is: a call then skips
     * the hand-off to the pool and back, which is most of a small {@code rpcSync}'s round trip. While it runs, the
     * event loop serves no other connection; {@code rpcSync}, {@code toHere} and any other blocking call of
     * tensorbus fail inside it (compose {@code rpcAsync} in a function of {@link #registerAsync} instead). A call a
     * worker makes to itself runs on its pool, as no event loop reads it.
     *
     * @return this registry
     * @throws IllegalArgumentException for a bad name (see {@link #register(String, RpcFunction)})
     * @throws NullPointerException when {@code function} is null
     */
    public RpcRegistry registerOnEventLoop(String name, RpcFunction function) {
        return registerSync(name, function, true);
    }

    /**
     * Makes the asynchronous {@code function} callable as {@code name}, replacing an earlier registration.
     *
     * @return this registry
     * @throws IllegalArgumentException for a bad name (see {@link #register(String, RpcFunction)})
     * @throws NullPointerException when {@code function} is null
     */
    public RpcRegistry registerAsync(String name, RpcAsyncFunction function) {
        RpcChecks.function(name);
        reserved(name);
        Objects.requireNonNull(function, "function");
        sync.remove(name);
        async.put(name, function);
        return this;
    }

    /** True when {@code name} is registered. */
    public boolean contains(String name) {
        return sync.containsKey(name) || async.containsKey(name);
    }

    /** The synchronous function of {@code name} and where it runs, or null. */
    SyncFunction function(String name) {
        return sync.get(name);
    }

    /** The asynchronous function of {@code name}, or null. */
    RpcAsyncFunction asyncFunction(String name) {
        return async.get(name);
    }

    private static void reserved(String name) {
        if (name.startsWith(RRefOwnerTable.PREFIX)) {
            throw new IllegalArgumentException("function names starting with '" + RRefOwnerTable.PREFIX
                    + "' are tensorbus's own, got '" + name + "'");
        }
    }

    private static Object arithmetic(String name, List<Object> args, boolean add) {
        if (args.size() != 2) {
            throw new IllegalArgumentException(name + " takes 2 arguments, got " + args.size());
        }
        Object a = args.get(0);
        Object b = args.get(1);
        // Recorded by autograd as torch.add is: in a distributed autograd context the arguments that require grad
        // carry a recv function, and the result's send function takes the gradient back.
        if (a instanceof Tensor ta) {
            return b instanceof Tensor tb ? (add ? ta.add(tb) : ta.mul(tb)) : (add ? ta.add(number(name, b))
                    : ta.mul(number(name, b)));
        }
        if (b instanceof Tensor tb) {
            return add ? tb.add(number(name, a)) : tb.mul(number(name, a));
        }
        if (a instanceof Long || a instanceof Integer) {
            if (b instanceof Long || b instanceof Integer) {
                long x = ((Number) a).longValue();
                long y = ((Number) b).longValue();
                return add ? x + y : x * y;
            }
        }
        double x = number(name, a);
        double y = number(name, b);
        return add ? x + y : x * y;
    }

    private static double number(String name, Object v) {
        if (v instanceof Number n) {
            return n.doubleValue();
        }
        throw new IllegalArgumentException(name + " takes tensors or numbers, got "
                + (v == null ? "null" : v.getClass().getName()));
    }
}
