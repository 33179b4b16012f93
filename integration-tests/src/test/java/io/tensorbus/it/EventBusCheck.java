package io.tensorbus.it;

import io.tensorbus.c10d.JobSecret;
import io.tensorbus.distributed.HashStore;
import io.tensorbus.distributed.eventbus.EventBusBridge;
import io.tensorbus.distributed.eventbus.TensorMessageCodec;
import io.tensorbus.distributed.rpc.Rpc;
import io.tensorbus.distributed.rpc.RpcAgent;
import io.tensorbus.distributed.rpc.RpcOptions;
import io.tensorbus.distributed.rpc.RpcRegistry;
import io.tensorbus.hazelcast.HazelcastCluster;
import io.tensorbus.tensor.Tensor;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.VerticleBase;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;

/**
 * The two JVMs of {@link MultiJvmEventBusTest}, joined in a Hazelcast-clustered Vert.x (the cluster named by the first
 * argument, on loopback ports from the second). Rank 0 is an RPC worker that serves {@code it.twice} through an
 * {@link EventBusBridge} and sums tensors sent to {@code it.sum}; rank 1 is a plain verticle, no RPC worker, that
 * calls it over the event bus: a proven call, an unproven one, and a tensor through {@link TensorMessageCodec}.
 */
public final class EventBusCheck {
    private EventBusCheck() {
    }

    public static void main(String[] args) throws Exception {
        int rank = Integer.parseInt(System.getenv("RANK"));
        JobSecret secret = JobSecret.fromEnvironment(System.getenv());
        Vertx vertx = HazelcastCluster.join(args[0], "127.0.0.1", Integer.parseInt(args[1]))
                .await(90, TimeUnit.SECONDS);
        TensorMessageCodec.register(vertx);
        if (rank == 0) {
            serve(vertx, secret);
        } else {
            vertx.deployVerticle(new Caller(secret)).await(90, TimeUnit.SECONDS);
        }
        vertx.close().await(30, TimeUnit.SECONDS);
        System.exit(0);
    }

    private static void serve(Vertx vertx, JobSecret secret) throws Exception {
        RpcRegistry registry = new RpcRegistry().register("it.twice", a -> ((Tensor) a.get(0)).mul(2));
        RpcAgent agent = Rpc.init("worker0", 0, 1, RpcOptions.builder().vertx(vertx).registry(registry)
                .store(new HashStore(Duration.ofSeconds(30))).secret(secret).build()).await(60, TimeUnit.SECONDS);
        EventBusBridge bridge = EventBusBridge.serve(agent, vertx.eventBus(), secret, "it.twice");
        vertx.eventBus().<Tensor>consumer("it.sum", m -> m.reply(m.body().sum().item()));
        Promise<Void> done = Promise.promise();
        vertx.eventBus().consumer("it.done", m -> {
            m.reply("bye");
            done.tryComplete();
        });
        System.out.println("BRIDGE READY");
        System.out.flush();
        done.future().await(90, TimeUnit.SECONDS);
        System.out.println("BRIDGE OK refused=" + bridge.refused());
        bridge.closeAsync().await(10, TimeUnit.SECONDS);
        agent.shutdown();
    }

    /** A verticle of another JVM that knows the job's secret and the worker's name, nothing of RPC. */
    private static final class Caller extends VerticleBase {
        private final JobSecret secret;

        Caller(JobSecret secret) {
            this.secret = secret;
        }

        @Override
        public Future<?> start() {
            Tensor x = Tensor.of(new float[] {1, 2, 3}, 3);
            return untilServed(x, 600).compose(twice -> {
                System.out.println("CALLER twice=" + Arrays.toString(twice.toFloatArray()));
                return vertx.eventBus().request(EventBusBridge.address("worker0", "it.twice"), Buffer.buffer(
                        new byte[] {1, 2, 3})).transform(r -> {
                            int code = r.failed() && r.cause() instanceof ReplyException e ? e.failureCode() : 0;
                            System.out.println("CALLER unproven=" + code);
                            return Future.succeededFuture();
                        });
            }).compose(v -> vertx.eventBus().<Double>request("it.sum", x)).compose(sum -> {
                System.out.println("CALLER sum=" + sum.body());
                return vertx.eventBus().request("it.done", "done");
            }).onComplete(r -> System.out.flush());
        }

        /** The proven call, again while the worker's address has not reached this member of the cluster yet. */
        private Future<Tensor> untilServed(Tensor x, int triesLeft) {
            return EventBusBridge.<Tensor>call(vertx.eventBus(), secret, "worker0", "it.twice", x).recover(e -> {
                if (triesLeft > 0 && e instanceof ReplyException r && r.failureType() == ReplyFailure.NO_HANDLERS) {
                    Promise<Tensor> later = Promise.promise();
                    vertx.setTimer(100, t -> untilServed(x, triesLeft - 1).onComplete(later));
                    return later.future();
                }
                return Future.failedFuture(e);
            });
        }
    }
}
