package io.tensorbus.mutiny;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.smallrye.mutiny.Uni;
import io.tensorbus.DType;
import io.tensorbus.distributed.autograd.DistAutograd;
import io.tensorbus.distributed.optim.OptimizerSpec;
import io.tensorbus.distributed.pipeline.Pipeline;
import io.tensorbus.distributed.rpc.RRef;
import io.tensorbus.distributed.rpc.RemoteException;
import io.tensorbus.distributed.rpc.RpcAgent;
import io.tensorbus.distributed.rpc.RpcRegistry;
import io.tensorbus.nn.Linear;
import io.tensorbus.nn.Module;
import io.tensorbus.tensor.Generator;
import io.tensorbus.tensor.Tensor;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Distributed autograd, the distributed optimizer and the pipeline through their faces, on two workers of one JVM. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class UniRpcWorkloadsTest {
    private static final Duration LONG = Duration.ofSeconds(20);
    private RpcJob job;

    @BeforeEach
    void setUp() throws Exception {
        job = new RpcJob(2, () -> new RpcRegistry()
                .register("test.add", args -> ((Tensor) args.get(0)).add((Tensor) args.get(1)))
                .register("test.linear", args -> stage()));
    }

    @AfterEach
    void tearDown() throws Exception {
        job.close();
    }

    @Test
    void aBackwardPassAndAStepThroughTheFacesMoveTheParametersAsSgd() {
        RpcAgent w0 = job.get(0);
        Tensor a = Tensor.full(2, DType.FLOAT32, 3).requiresGrad(true);
        Tensor b = Tensor.full(5, DType.FLOAT32, 3).requiresGrad(true);
        Uni<UniDistributedOptimizer> create = UniDistributedOptimizer.create(w0, OptimizerSpec.sgd(0.5),
                List.of(RRef.of(w0, a), RRef.of(w0, b)));
        UniDistributedOptimizer opt = create.await().atMost(LONG);
        UniDistAutograd autograd = new UniDistAutograd(w0.distAutograd());
        try (DistAutograd.Context context = w0.distAutograd().context()) {
            Tensor sum = w0.rpcSync("worker1", "test.add", a, b);
            autograd.backward(context.id(), List.of(sum.mul(sum).sum()), false).await().atMost(LONG);
            // d/da of sum((a + b)^2) is 2 (a + b) = 14; SGD with lr 0.5 moves a by -7.
            assertArrayEquals(new float[] {14, 14, 14},
                    w0.distAutograd().getGradients(context.id()).get(a).toFloatArray());
            opt.step(context.id()).await().atMost(LONG);
            UniDistAutograd.release(context).await().atMost(LONG);
        }
        assertArrayEquals(new float[] {-5, -5, -5}, a.detach().toFloatArray());
        assertArrayEquals(new float[] {-2, -2, -2}, b.detach().toFloatArray());
        assertEquals(1, opt.stateDict().await().atMost(LONG).size());
        opt.optimizer().close();
    }

    @Test
    void failuresReachTheUnis() {
        RpcAgent w0 = job.get(0);
        Tensor p = Tensor.zeros(2).requiresGrad(true);
        Throwable bad = failureOf(UniDistributedOptimizer.create(w0, OptimizerSpec.sgd(0.1), List.of()));
        assertTrue(bad instanceof IllegalArgumentException, String.valueOf(bad));
        UniDistributedOptimizer opt = UniDistributedOptimizer.create(w0, OptimizerSpec.sgd(0.1),
                List.of(RRef.of(w0, p))).await().atMost(LONG);
        Throwable unknown = failureOf(opt.step(777L));
        assertTrue(unknown instanceof RemoteException || unknown instanceof IllegalArgumentException,
                String.valueOf(unknown));
        Throwable noContext = failureOf(new UniDistAutograd(w0.distAutograd()).backward(777L,
                List.of(p.sum()), false));
        assertTrue(noContext instanceof IllegalArgumentException, String.valueOf(noContext));
        opt.optimizer().close();
    }

    /** The one stage of the pipeline test, the same weights wherever it is made. */
    private static Module stage() {
        return new Linear(4, 3, true, new Generator(7));
    }

    @Test
    void aPipelinesForwardPassThroughItsFaceIsTheStagesOwn() {
        RpcAgent w0 = job.get(0);
        Tensor x = Tensor.randn(new Generator(3), DType.FLOAT32, 6, 4);
        try (Pipeline pipe = Pipeline.of(w0, List.of(w0.<Module>remote("worker1", "test.linear")), 3)) {
            UniPipeline uni = new UniPipeline(pipe);
            Tensor out = uni.forward(x).await().atMost(LONG);
            assertArrayEquals(stage().forward(x).detach().toFloatArray(), out.detach().toFloatArray(), 1e-6f);
            Throwable scalar = failureOf(uni.forward(Tensor.scalar(1)));
            assertTrue(scalar instanceof IllegalArgumentException, String.valueOf(scalar));
        }
    }

    private static Throwable failureOf(Uni<?> u) {
        return u.onItem().<Throwable>transform(item -> null).onFailure().recoverWithItem(e -> e).await().atMost(LONG);
    }
}
