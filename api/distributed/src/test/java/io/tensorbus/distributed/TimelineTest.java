package io.tensorbus.distributed;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tensorbus.distributed.autograd.DistAutograd;
import io.tensorbus.distributed.optim.DistributedOptimizer;
import io.tensorbus.distributed.optim.OptimizerSpec;
import io.tensorbus.distributed.optim.ZeroRedundancyOptimizer;
import io.tensorbus.distributed.rpc.RRef;
import io.tensorbus.distributed.rpc.RpcAgent;
import io.tensorbus.distributed.rpc.RpcOptions;
import io.tensorbus.distributed.rpc.RpcRegistry;
import io.tensorbus.distributed.rpc.RpcWorkers;
import io.tensorbus.internal.distributed.TimelineClock;
import io.tensorbus.internal.distributed.TimelineRecorder;
import io.tensorbus.parallel.DistributedDataParallel;
import io.tensorbus.parallel.Mlp;
import io.tensorbus.tensor.Tensor;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The ranks' timelines, their merge on one clock, and the straggler it names. */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class TimelineTest {
    private static final Set<String> PHASES = Set.of("B", "E", "X", "i", "I", "b", "e", "n", "M", "C", "s", "t", "f");

    @TempDir
    Path dir;

    /** Rank 2 sleeps 300 ms before the second all-reduce: the merge names it the straggler of #2, and only of #2. */
    @Test
    void aRankThatSleepsBeforeACollectiveIsNamedItsStraggler() throws Exception {
        Distributed.spawn(3, Duration.ofMinutes(1), b -> b.environment(withTimeline()), pg -> {
            Tensor t = Tensor.zeros(64);
            pg.allReduce(t).await(10, TimeUnit.SECONDS);
            if (pg.rank() == 2) {
                Thread.sleep(300);
            }
            pg.allReduce(t).await(10, TimeUnit.SECONDS);
            if (pg.rank() == 0) {
                pg.send(t, 1);
            } else if (pg.rank() == 1) {
                pg.recv(t, 0);
            }
            pg.barrier().await(10, TimeUnit.SECONDS);
        });
        Path out = dir.resolve("job.json");
        Timeline.Report report = Timeline.merge(dir, out);
        assertEquals(List.of(0, 1, 2), report.ranks());
        Timeline.Straggler second = report.stragglers().stream().filter(s -> s.seq() == 2).findFirst().orElseThrow();
        assertEquals(2, second.rank(), report.format());
        assertEquals("allReduce", second.op());
        assertTrue(second.lagMillis() >= 250, report.format());
        assertTrue(report.stragglers().stream().filter(s -> s.seq() != 2).allMatch(s -> s.lagMillis() < 250),
                report.format());
        assertTrue(report.format().contains("allReduce #2 on group 'default': rank 2 called last"), report.format());
        JsonObject merged = new JsonObject(Files.readString(out, StandardCharsets.UTF_8));
        checkTraceEventFormat(merged);
        JsonArray events = merged.getJsonArray("traceEvents");
        assertTrue(events.stream().map(JsonObject.class::cast).anyMatch(e -> "p2p".equals(e.getString("cat"))
                && "recv".equals(e.getString("name")) && e.getInteger("pid") == 1), "rank 1's receive is there");
        assertEquals(2, merged.getJsonObject("otherData").getJsonArray("stragglers").getJsonObject(1)
                .getInteger("rank"));
    }

    @Test
    void ddpStepsAndTheirBucketReductionsAreOnTheTimeline() throws Exception {
        Distributed.spawn(2, Duration.ofMinutes(1), b -> b.environment(withTimeline()), pg -> {
            DistributedDataParallel ddp = DistributedDataParallel.builder(new Mlp(3), pg).build();
            for (int step = 0; step < 2; step++) {
                ddp.forward(Tensor.ones(4, 8)).sum().backward();
            }
        });
        JsonObject merged = new JsonObject(Files.readString(write(), StandardCharsets.UTF_8));
        checkTraceEventFormat(merged);
        for (int rank = 0; rank < 2; rank++) {
            int r = rank;
            List<JsonObject> steps = merged.getJsonArray("traceEvents").stream().map(JsonObject.class::cast)
                    .filter(e -> "ddp".equals(e.getString("cat")) && e.getInteger("pid") == r).toList();
            assertEquals(2, steps.size(), "two steps of rank " + r);
            assertTrue(steps.stream().allMatch(e -> e.getLong("dur") > 0
                    && e.getJsonObject("args").getLong("forward_backward_us") <= e.getLong("dur")), steps.toString());
        }
    }

    /**
     * Two all-reduces called back to back: the second waits in the queue while the first runs, so it is drawn from
     * its call, marked started where the first ended, and ends after that.
     */
    @Test
    void aCollectiveQueuedBehindAnotherIsMarkedStartedWhereThatOneEnded() throws Exception {
        Distributed.spawn(2, Duration.ofMinutes(1), b -> b.environment(withTimeline()), pg -> {
            Future<?> first = pg.allReduce(Tensor.ones(4 << 20));
            Future<?> second = pg.allReduce(Tensor.ones(16));
            second.await(20, TimeUnit.SECONDS);
            first.await(20, TimeUnit.SECONDS);
        });
        JsonObject merged = new JsonObject(Files.readString(write(), StandardCharsets.UTF_8));
        checkTraceEventFormat(merged);
        for (int rank = 0; rank < 2; rank++) {
            Map<String, JsonObject> second = new HashMap<>();
            long firstEnd = -1;
            for (Object o : merged.getJsonArray("traceEvents")) {
                JsonObject e = (JsonObject) o;
                boolean async = e.getValue("id") != null;
                if (e.getInteger("pid") != rank || !"collective".equals(e.getString("cat")) || !async) {
                    continue;
                }
                long seq = e.getLong("id") & ((1L << 40) - 1);
                if (seq == 1 && "e".equals(e.getString("ph"))) {
                    firstEnd = e.getLong("ts");
                } else if (seq == 2) {
                    second.put(e.getString("ph"), e);
                }
            }
            JsonObject started = second.get("n");
            assertNotNull(started, "rank " + rank + "'s second all-reduce is marked started: " + second);
            assertEquals("started", started.getString("name"));
            assertEquals(firstEnd, started.getLong("ts"), "where the first ended");
            assertTrue(second.get("b").getLong("ts") < started.getLong("ts"), "called before it started");
            assertTrue(started.getLong("ts") <= second.get("e").getLong("ts"), "started before it ended");
        }
    }

    @Test
    void zeroRedundancyOptimizerStepsAreOnEachRanksTimeline() throws Exception {
        Distributed.spawn(2, Duration.ofMinutes(1), b -> b.environment(withTimeline()), pg -> {
            List<Tensor> params = new Mlp(3).parameters();
            ZeroRedundancyOptimizer zero = ZeroRedundancyOptimizer.builder(OptimizerSpec.sgd(0.1)).group(pg)
                    .build(params);
            for (int step = 0; step < 2; step++) {
                params.forEach(p -> p.setGrad(Tensor.onesLike(p)));
                zero.step();
            }
        });
        JsonObject merged = new JsonObject(Files.readString(write(), StandardCharsets.UTF_8));
        checkTraceEventFormat(merged);
        for (int rank = 0; rank < 2; rank++) {
            int r = rank;
            assertEquals(2, merged.getJsonArray("traceEvents").stream().map(JsonObject.class::cast)
                    .filter(e -> e.getInteger("pid") == r && "zero step".equals(e.getString("name"))
                            && "b".equals(e.getString("ph"))).count(), "rank " + r + "'s two steps");
        }
    }

    private Path write() throws Exception {
        Path out = dir.resolve("job.json");
        Timeline.merge(dir, out);
        return out;
    }

    @Test
    void rpcCallsBackwardPassesAndOptimizerStepsAreOnTheCallersTimeline() throws Exception {
        TimelineRecorder timeline = TimelineRecorder.open(withTimeline(), 0);
        RpcRegistry functions = new RpcRegistry().register("square", a -> ((Tensor) a.get(0)).mul((Tensor) a.get(0)));
        try (RpcWorkers w = new RpcWorkers().start(2, r -> RpcOptions.builder().registry(functions))) {
            RpcAgent a = w.get(0);
            Tensor x = Tensor.ones(3).requiresGrad(true);
            try (RRef<Tensor> param = RRef.of(a, x);
                 DistributedOptimizer opt = DistributedOptimizer.create(a, OptimizerSpec.sgd(0.1), List.of(param));
                 DistAutograd.Context c = a.distAutograd().context()) {
                Tensor y = a.rpcSync("worker1", "square", x);
                a.distAutograd().backward(c.id(), List.of(y.sum()));
                opt.step(c.id());
            }
        } finally {
            timeline.close();
        }
        String text = Files.readString(dir.resolve("rank_0.json"), StandardCharsets.UTF_8).strip();
        JsonArray events = new JsonArray(text.substring(0, text.length() - 1) + "]");
        checkTraceEventFormat(new JsonObject().put("traceEvents", events));
        assertTrue(events.stream().map(JsonObject.class::cast).anyMatch(e -> "rpc".equals(e.getString("cat"))
                && "square".equals(e.getString("name")) && "b".equals(e.getString("ph"))), events.encode());
        assertTrue(events.stream().map(JsonObject.class::cast).anyMatch(e -> "dist_autograd".equals(
                e.getString("cat")) && "e".equals(e.getString("ph"))), events.encode());
        assertTrue(events.stream().map(JsonObject.class::cast).anyMatch(e -> "optimizer".equals(e.getString("cat"))
                && "step".equals(e.getString("name"))), events.encode());
    }

    /** RPC alone, no process group: each worker opens its timeline, measures its clock and draws its calls. */
    @Test
    void aJobOfRpcAloneHasATimelineOnOneClock() throws Exception {
        RpcRegistry functions = new RpcRegistry().register("twice", a -> ((Tensor) a.get(0)).mul(2));
        try (RpcWorkers w = new RpcWorkers().start(2, r -> RpcOptions.builder().registry(functions)
                .environment(withTimeline()))) {
            Tensor y = w.get(0).rpcSync("worker1", "twice", Tensor.ones(3));
            assertEquals(6.0, y.sum().item(), 1e-6);
        }
        JsonObject merged = new JsonObject(Files.readString(write(), StandardCharsets.UTF_8));
        checkTraceEventFormat(merged);
        List<JsonObject> events = merged.getJsonArray("traceEvents").stream().map(JsonObject.class::cast).toList();
        assertTrue(events.stream().anyMatch(e -> "rpc".equals(e.getString("cat"))
                && "twice".equals(e.getString("name")) && e.getInteger("pid") == 0), "worker0's call is drawn");
        for (int rank = 0; rank < 2; rank++) {
            String text = Files.readString(dir.resolve("rank_" + rank + ".json"), StandardCharsets.UTF_8);
            assertTrue(text.contains("offset_us"), "rank " + rank + " measured its clock: " + text);
        }
    }

    @Test
    void eachRankMeasuresItsClockAgainstRankZeros() throws Exception {
        Distributed.spawn(2, Duration.ofMinutes(1), b -> b.environment(withTimeline()), pg ->
                pg.barrier().await(10, TimeUnit.SECONDS));
        for (int rank = 0; rank < 2; rank++) {
            String text = Files.readString(dir.resolve("rank_" + rank + ".json"), StandardCharsets.UTF_8).strip();
            assertTrue(text.startsWith("[") && text.endsWith(","), "the array form, open for more events");
            JsonArray events = new JsonArray(text.substring(0, text.length() - 1) + "]");
            JsonObject clock = events.stream().map(JsonObject.class::cast)
                    .filter(e -> "tensorbus_clock".equals(e.getString("name"))).findFirst().orElseThrow();
            long offset = clock.getJsonObject("args").getLong("offset_us");
            // One JVM, one clock: what the exchange measures is its own error, a few store round trips at most.
            assertTrue(Math.abs(offset) < 20_000, "offset " + offset + " us on one host");
        }
    }

    /**
     * A rank whose peer records no timeline (rank 0 without the variable, or another rank) gives up aligning after
     * the first exchange's wait instead of failing the group's start; the rank that pinged leaves the pings rank 0
     * would wait for.
     */
    @Test
    void aClockExchangeWithoutTheOtherSideGoesOnUnaligned() throws Exception {
        try (HashStore store = new HashStore()) {
            TimelineRecorder one = TimelineRecorder.open(withTimeline(), 1);
            try {
                TimelineClock.sync(store, 1, 2, one, Duration.ofMillis(200)).await(10, TimeUnit.SECONDS);
                assertTrue(store.check(List.of("timeline/clock/ping/1/7")).await(10, TimeUnit.SECONDS));
            } finally {
                one.close();
            }
            TimelineRecorder zero = TimelineRecorder.open(withTimeline(), 0);
            try {
                TimelineClock.sync(store, 0, 3, zero, Duration.ofMillis(200)).await(10, TimeUnit.SECONDS);
                assertTrue(store.check(List.of("timeline/clock/pong/1/7")).await(10, TimeUnit.SECONDS),
                        "rank 1's pings answered");
                assertFalse(store.check(List.of("timeline/clock/pong/2/0")).await(10, TimeUnit.SECONDS),
                        "rank 2, which sent none, skipped");
            } finally {
                zero.close();
            }
        }
        String text = Files.readString(dir.resolve("rank_1.json"), StandardCharsets.UTF_8).strip();
        assertFalse(text.contains("offset_us"), "rank 1 measured no offset: " + text);
    }

    @Test
    void aDirectoryWithoutTimelinesIsSaidPlainly() throws Exception {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () ->
                Timeline.merge(dir, dir.resolve("job.json")));
        assertTrue(e.getMessage().contains("holds no timeline"), e.getMessage());
        Files.writeString(dir.resolve("rank_0.json"), "[{\"name\": ");
        e = assertThrows(IllegalArgumentException.class, () -> Timeline.merge(dir, dir.resolve("job.json")));
        assertTrue(e.getMessage().contains("rank_0.json is not a timeline"), e.getMessage());
    }

    private Map<String, String> withTimeline() {
        Map<String, String> env = new HashMap<>(Distributed.environment());
        env.put(Timeline.ENV, dir.toString());
        return env;
    }

    /**
     * The Trace Event Format's rules for what this project writes: named events of a known phase with a pid, times
     * in microseconds, complete events with a duration, async begins matched by an end of the same category and id
     * no earlier than them, async instants inside their span.
     */
    static void checkTraceEventFormat(JsonObject trace) {
        JsonArray events = trace.getJsonArray("traceEvents");
        assertNotNull(events, "traceEvents");
        Map<String, Long> open = new HashMap<>();
        for (Object o : events) {
            JsonObject e = (JsonObject) o;
            String ph = e.getString("ph");
            assertTrue(e.getValue("name") instanceof String && PHASES.contains(ph), "name and phase: " + e);
            assertTrue(e.getValue("pid") instanceof Number, "pid: " + e);
            if (!"M".equals(ph)) {
                assertTrue(e.getValue("ts") instanceof Number, "ts: " + e);
            }
            if ("X".equals(ph)) {
                assertTrue(e.getLong("dur") >= 0, "dur: " + e);
            }
            if ("n".equals(ph)) {
                Long begin = open.get(e.getInteger("pid") + "/" + e.getString("cat") + "/" + e.getValue("id"));
                assertNotNull(begin, "an async instant inside its span: " + e);
                assertTrue(e.getLong("ts") >= begin, "an async instant no earlier than its begin: " + e);
            }
            if ("b".equals(ph) || "e".equals(ph)) {
                assertNotNull(e.getString("cat"), "an async event's category: " + e);
                assertNotNull(e.getValue("id"), "an async event's id: " + e);
                String key = e.getInteger("pid") + "/" + e.getString("cat") + "/" + e.getValue("id");
                if ("b".equals(ph)) {
                    assertEquals(null, open.put(key, e.getLong("ts")), "one begin per id: " + e);
                } else {
                    Long begin = open.remove(key);
                    assertNotNull(begin, "an end after its begin: " + e);
                    assertTrue(e.getLong("ts") >= begin, "an end no earlier than its begin: " + e);
                }
            }
        }
        assertTrue(open.isEmpty(), "every begin ends: " + open);
    }
}
