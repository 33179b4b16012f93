package io.tensorbus.mutiny;

import io.smallrye.mutiny.Uni;
import io.tensorbus.distributed.rpc.RpcAgent;
import io.tensorbus.distributed.rpc.WorkerInfo;
import java.time.Duration;

/**
 * Mutiny's view of an {@link RpcAgent}: its asynchronous calls as lazy {@link Uni}s, which make the call when
 * subscribed, once per subscription. A call the agent refuses at once (an unknown worker, an argument the codec
 * cannot encode, an agent shut down) fails the {@code Uni} rather than throwing where it is built. {@code remote}
 * makes its call when subscribed too, and emits the reference at once, as {@code RpcAgent.remote} returns it while
 * the owner still runs the function.
 */
public final class UniRpcAgent {
    private final RpcAgent agent;

    /**
     * Wraps {@code agent}.
     *
     * @throws NullPointerException when {@code agent} is null
     */
    public UniRpcAgent(RpcAgent agent) {
        if (agent == null) {
            throw new NullPointerException("agent");
        }
        this.agent = agent;
    }

    /** The wrapped agent. */
    public RpcAgent agent() {
        return agent;
    }

    /** {@link RpcAgent#rpcAsync(String, String, Object...)}. */
    public <T> Uni<T> rpcAsync(String to, String function, Object... args) {
        return UniProcessGroup.uni(() -> agent.<T>rpcAsync(to, function, args));
    }

    /** {@link RpcAgent#rpcAsync(int, String, Object...)}. */
    public <T> Uni<T> rpcAsync(int to, String function, Object... args) {
        return UniProcessGroup.uni(() -> agent.<T>rpcAsync(to, function, args));
    }

    /** {@link RpcAgent#rpcAsync(WorkerInfo, Duration, String, Object...)}. */
    public <T> Uni<T> rpcAsync(WorkerInfo to, Duration timeout, String function, Object... args) {
        return UniProcessGroup.uni(() -> agent.<T>rpcAsync(to, timeout, function, args));
    }

    /** {@link RpcAgent#remote(String, String, Object...)}, the reference's face. */
    public <T> Uni<UniRRef<T>> remote(String to, String function, Object... args) {
        return Uni.createFrom().item(() -> new UniRRef<>(agent.<T>remote(to, function, args)));
    }

    /** {@link RpcAgent#remote(int, String, Object...)}, the reference's face. */
    public <T> Uni<UniRRef<T>> remote(int to, String function, Object... args) {
        return Uni.createFrom().item(() -> new UniRRef<>(agent.<T>remote(to, function, args)));
    }

    /** {@link RpcAgent#remote(WorkerInfo, Duration, String, Object...)}, the reference's face. */
    public <T> Uni<UniRRef<T>> remote(WorkerInfo to, Duration timeout, String function, Object... args) {
        return Uni.createFrom().item(() -> new UniRRef<>(agent.<T>remote(to, timeout, function, args)));
    }

    /** {@link RpcAgent#shutdown(boolean)}. */
    public Uni<Void> shutdown(boolean graceful) {
        return UniProcessGroup.uni(() -> agent.shutdown(graceful));
    }

    /** {@link RpcAgent#shutdown(boolean, Duration)}. */
    public Uni<Void> shutdown(boolean graceful, Duration timeout) {
        return UniProcessGroup.uni(() -> agent.shutdown(graceful, timeout));
    }
}
