package io.tensorbus.it;

import io.tensorbus.distributed.rpc.RRef;
import io.tensorbus.distributed.rpc.Rpc;
import io.tensorbus.distributed.rpc.RpcAgent;
import io.tensorbus.distributed.rpc.RpcOptions;
import io.tensorbus.distributed.rpc.RpcRegistry;
import io.tensorbus.hazelcast.HazelcastCluster;
import io.tensorbus.tensor.Tensor;
import io.vertx.core.Vertx;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * One worker of {@link MultiJvmClusterRpcTest}, started by {@code tensorbus launch} (RANK, WORLD_SIZE):
 * joins the Hazelcast cluster named by the first argument on loopback ports from the second, meets the
 * other workers through {@code cluster://<name>}, and worker0 calls every other worker and shares an RRef
 * made on worker1 with the last worker; all shut down gracefully and print {@code CLUSTER RPC OK worker<R>}
 * when no RRef leaked.
 */
public final class ClusterRpcCheck {
    private ClusterRpcCheck() {
    }

    public static void main(String[] args) throws Exception {
        int rank = Integer.parseInt(System.getenv("RANK"));
        int world = Integer.parseInt(System.getenv("WORLD_SIZE"));
        Vertx vertx = HazelcastCluster.join(args[0], "127.0.0.1", Integer.parseInt(args[1]))
                .await(90, TimeUnit.SECONDS);
        RpcRegistry registry = new RpcRegistry()
                .register("it.whoami", a -> "worker" + rank)
                .register("it.fetchSum", a -> {
                    try (RRef<Tensor> r = rref(a.get(0))) {
                        return r.toHere().sum().item();
                    }
                });
        RpcAgent agent = Rpc.init("worker" + rank, rank, world, RpcOptions.builder().vertx(vertx)
                .initMethod("cluster://" + args[0]).registry(registry).timeout(Duration.ofSeconds(30))
                .initTimeout(Duration.ofSeconds(90)).build()).await(90, TimeUnit.SECONDS);
        if (rank == 0) {
            for (int r = 1; r < world; r++) {
                expect("worker" + r, agent.rpcSync(r, "it.whoami"));
            }
            try (RRef<Tensor> t = agent.remote("worker1", "builtin.add", Tensor.ones(8), 2.0)) {
                expect(24.0, agent.rpcSync(world - 1, "it.fetchSum", t));
            }
        }
        agent.shutdown();
        if (!agent.rrefLeaks().isEmpty()) {
            throw new AssertionError("RRefs leaked: " + agent.rrefLeaks());
        }
        vertx.close().await(30, TimeUnit.SECONDS);
        System.out.println("CLUSTER RPC OK worker" + rank);
        System.out.flush();
        System.exit(0);
    }

    @SuppressWarnings("unchecked")
    private static <T> RRef<T> rref(Object o) {
        return (RRef<T>) o;
    }

    private static void expect(Object expected, Object actual) {
        if (!expected.equals(actual)) {
            throw new AssertionError("expected " + expected + " but got " + actual);
        }
    }
}
