package io.tensorbus.parallel;

import io.tensorbus.DType;
import io.tensorbus.distributed.Distributed;
import io.tensorbus.distributed.HashStore;
import io.tensorbus.distributed.InitOptions;
import io.tensorbus.distributed.ProcessGroup;
import io.tensorbus.internal.tensor.TensorInternals;
import io.tensorbus.nn.Functional;
import io.tensorbus.nn.models.MnistNet;
import io.tensorbus.tensor.Generator;
import io.tensorbus.tensor.Tensor;
import io.vertx.core.Vertx;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.junit.jupiter.api.Assertions.assertTrue;

/** Communication overlaps the backward pass: seen through the "recording" backend's log of all-reduces. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class OverlapTest {

    @Test
    void theFirstBucketIsAllReducedBeforeTheBackwardPassReachesTheFirstLayer() throws Exception {
        List<String> events = RecordingBackendProvider.EVENTS;
        events.clear();
        Vertx vertx = Distributed.newVertx();
        HashStore store = new HashStore(Duration.ofSeconds(30));
        try {
            List<CompletableFuture<Void>> ranks = new ArrayList<>();
            for (int r = 0; r < 2; r++) {
                int rank = r;
                ranks.add(CompletableFuture.runAsync(() -> trainOneStep(rank, vertx, store, events)));
            }
            CompletableFuture.allOf(ranks.toArray(CompletableFuture[]::new)).get(50, TimeUnit.SECONDS);
        } finally {
            vertx.close().await(10, TimeUnit.SECONDS);
        }
        for (int r = 0; r < 2; r++) {
            String p = "rank " + r + " ";
            int start = events.indexOf(p + "backward starts");
            int firstBucket = events.indexOf(p + "allReduce 510");
            int firstLayer = events.indexOf(p + "conv1.weight gradient ready");
            int end = events.indexOf(p + "backward returned");
            assertTrue(start >= 0 && start < firstBucket && firstBucket < firstLayer && firstLayer < end,
                    "expected: backward starts, allReduce of bucket 0 (fc2, 510 elements), conv1's gradient, backward"
                            + " returns; got " + events);
        }
    }

    private static void trainOneStep(int rank, Vertx vertx, HashStore store, List<String> events) {
        String p = "rank " + rank + " ";
        InitOptions o = InitOptions.builder().backend("recording").rank(rank).worldSize(2).store(store).vertx(vertx)
                .timeout(Duration.ofSeconds(30)).build();
        ProcessGroup pg = Distributed.initProcessGroup(o).toCompletionStage().toCompletableFuture().join();
        try {
            // A 1 KiB cap: bucket 0 holds fc2 (500 + 10 elements), conv1 is in the last bucket.
            DistributedDataParallel ddp = DistributedDataParallel.builder(new MnistNet(new Generator(1)), pg)
                    .bucketCapMb(0.001).build();
            ddp.eval();
            TensorInternals.gradAccumulator(ddp.module().namedParameters().get("conv1.weight"))
                    .registerPostHook((in, out) -> events.add(p + "conv1.weight gradient ready"));
            Tensor x = Tensor.randn(new Generator(2), DType.FLOAT32, 8, 1, 28, 28);
            Tensor loss = Functional.nllLoss(ddp.forward(x), Tensor.of(new long[] {1, 2, 3, 4, 5, 6, 7, 8}, 8));
            events.add(p + "backward starts");
            loss.backward();
            events.add(p + "backward returned");
        } finally {
            pg.destroy().toCompletionStage().toCompletableFuture().join();
        }
    }
}
