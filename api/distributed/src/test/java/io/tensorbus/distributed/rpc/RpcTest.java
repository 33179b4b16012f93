package io.tensorbus.distributed.rpc;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufAllocatorMetricProvider;
import io.tensorbus.DType;
import io.tensorbus.c10d.JobSecret;
import io.tensorbus.distributed.HashStore;
import io.tensorbus.distributed.rpc.impl.RpcFrame;
import io.tensorbus.internal.distributed.RankThreadsForTest;
import io.tensorbus.io.ObjectCodec;
import io.tensorbus.tensor.MemoryScope;
import io.tensorbus.tensor.Tensor;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.net.NetClient;
import io.vertx.core.net.NetSocket;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntFunction;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** RPC agents of several workers in one JVM, meeting through one in-memory store. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RpcTest {
    private final RpcWorkers workers = new RpcWorkers();
    private final Vertx vertx = workers.vertx();
    private final HashStore store = workers.store();
    private final List<RpcAgent> agents = workers.all();

    @AfterEach
    void tearDown() throws Exception {
        workers.close();
    }

    /** Starts {@code n} workers named worker0.. whose options come from {@code options(rank)}. */
    private List<RpcAgent> start(int n, IntFunction<RpcOptions.Builder> options) throws Exception {
        return workers.start(n, options).all();
    }

    private List<RpcAgent> start(int n, RpcRegistry registry) throws Exception {
        return start(n, r -> RpcOptions.builder().registry(registry).timeout(Duration.ofSeconds(20)));
    }

    @Test
    void rpcSyncResultsBelongToTheCallersOpenMemoryScope() throws Exception {
        List<RpcAgent> w = start(2, new RpcRegistry());
        Tensor kept;
        List<Object> inScope;
        try (MemoryScope scope = MemoryScope.open()) {
            inScope = w.get(0).rpcSync("worker1", "builtin.echo", List.of(Tensor.ones(4), Tensor.ones(2)));
            kept = w.get(0).rpcSync("worker1", "builtin.echo", Tensor.ones(3));
            scope.keep(kept);
            assertEquals(4.0, ((Tensor) inScope.get(0)).sum().item(), 0.0);
        }
        assertThrows(IllegalStateException.class, () -> ((Tensor) inScope.get(0)).sum(),
                "a result's storage went back to the cache with its scope");
        assertThrows(IllegalStateException.class, () -> ((Tensor) inScope.get(1)).sum());
        assertEquals(3.0, kept.sum().item(), 0.0, "a kept result outlives the scope");
        Tensor outside = w.get(0).rpcSync("worker1", "builtin.echo", Tensor.ones(5));
        System.gc();
        assertEquals(5.0, outside.sum().item(), 0.0, "without a scope, the collector decides");
    }

    @Test
    void syncAndAsyncCallsReachRegisteredFunctionsAndBuiltinsByNameRankAndWorkerInfo() throws Exception {
        RpcRegistry registry = new RpcRegistry().register("test.square", args -> {
            long x = ((Number) args.get(0)).longValue();
            return x * x;
        });
        List<RpcAgent> w = start(3, registry);
        Tensor sum = w.get(0).rpcSync("worker1", "builtin.add", Tensor.ones(3), 2.0);
        assertArrayEquals(new float[] {3, 3, 3}, sum.toFloatArray());
        assertEquals(49L, (Long) w.get(0).rpcSync(2, "test.square", 7));
        Future<Long> later = w.get(2).rpcAsync(w.get(2).workerInfo("worker0"), Duration.ofSeconds(5), "test.square",
                9);
        assertEquals(81L, later.await(10, TimeUnit.SECONDS));
        assertEquals(12L, (Long) w.get(1).rpcSync("worker1", "builtin.mul", 3, 4), "a call to itself");
        assertEquals(List.of("worker0", "worker1", "worker2"), w.get(1).workers().stream().map(WorkerInfo::name)
                .toList());
    }

    @Test
    void tensorsTravelWholeAsAttachmentsOrInsideValuesAndArriveAsCopies() throws Exception {
        RpcRegistry registry = new RpcRegistry().register("test.describe", args -> {
            Tensor big = (Tensor) args.get(0);
            Tensor ints = (Tensor) args.get(1);
            Tensor nested = (Tensor) ((List<?>) args.get(2)).get(0);
            return List.of(big.sum().item(), ints.sum().item(), nested.sum().item(), big.requiresGrad(),
                    Arrays.toString(big.shape()));
        });
        List<RpcAgent> w = start(2, registry);
        Tensor big = Tensor.arange(0, 750_000, 1, DType.FLOAT32).reshape(3, 250_000)
                .requiresGrad(true);
        Tensor ints = Tensor.of(new long[] {1, 2, 3}, 3);
        List<Object> d = w.get(0).rpcSync("worker1", "test.describe", big, ints, List.of(Tensor.ones(4)));
        assertEquals(big.sum().item(), (Double) d.get(0), 1e3);
        assertEquals(List.of(6.0, 4.0, true, "[3, 250000]"), d.subList(1, 5));
        Tensor back = w.get(0).rpcSync("worker1", "builtin.echo", big.t());
        assertArrayEquals(big.t().contiguous().toFloatArray(), back.toFloatArray(), "a transposed view arrives whole");
        Tensor self = w.get(0).rpcSync("worker0", "builtin.echo", ints);
        self.set(9, 0);
        assertEquals(1L, ints.getLong(0), "a call to itself gets a copy too");
    }

    @Test
    void aWorkerAcceptsCallsOnItsBindHostAndABadOneFailsInit() throws Exception {
        List<RpcAgent> w = start(2, r -> RpcOptions.builder().bindHost("127.0.0.1").timeout(Duration.ofSeconds(20)));
        assertEquals(5L, (Long) w.get(0).rpcSync("worker1", "builtin.add", 2, 3));
        assertEquals("127.0.0.1", w.get(1).table().address(w.get(1).self()).host());
        assertThrows(IllegalArgumentException.class, () -> RpcOptions.builder().bindHost(" "));
        HashStore other = new HashStore(Duration.ofSeconds(5));
        Future<RpcAgent> bad = Rpc.init("alone", 0, 1, RpcOptions.builder().store(other).vertx(vertx)
                .bindHost("192.0.2.1").secret(JobSecret.random()).initTimeout(Duration.ofSeconds(5)).build());
        ExecutionException e = assertThrows(ExecutionException.class,
                () -> bad.toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS));
        assertInstanceOf(RpcException.class, e.getCause());
        assertTrue(e.getCause().getMessage().startsWith("alone cannot accept calls on 192.0.2.1: "),
                e.getCause().getMessage());
        // Without a secret the worker may not even try an address others can reach.
        Future<RpcAgent> open = Rpc.init("alone", 0, 1, RpcOptions.builder().store(new HashStore(Duration.ofSeconds(5)))
                .vertx(vertx).bindHost("0.0.0.0").secret(JobSecret.none()).initTimeout(Duration.ofSeconds(5)).build());
        ExecutionException n = assertThrows(ExecutionException.class,
                () -> open.toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS));
        assertInstanceOf(IllegalStateException.class, n.getCause());
        assertTrue(n.getCause().getMessage().contains("RPC worker alone cannot listen on 0.0.0.0 without a job secret")
                && n.getCause().getMessage().contains(JobSecret.ENV), n.getCause().getMessage());
    }

    @Test
    void tensorsNestedInListsAndMapsTravelAsAttachmentsAndBadSlotsAreRefused() throws Exception {
        List<RpcAgent> w = start(2, new RpcRegistry());
        Tensor a = Tensor.arange(0, 100_000, 1, DType.FLOAT32);
        Tensor b = Tensor.ones(3, 4);
        List<Object> values = List.of("builtin.echo", List.of(a, Map.of("b", b, "n", 7)));
        RpcPayload.Encoded e = RpcPayload.encode(w.get(0).rrefs(), values);
        assertEquals(2, e.tensors().size(), "both nested tensors are attachments");
        assertTrue(e.body().length < 1000, "the body holds no tensor bytes: " + e.body().length);
        List<Object> back = w.get(0).rpcSync("worker1", "builtin.echo", List.of(a, Map.of("b", b, "n", 7)));
        assertArrayEquals(a.toFloatArray(), ((Tensor) back.get(0)).toFloatArray());
        Map<?, ?> m = (Map<?, ?>) back.get(1);
        assertArrayEquals(b.toFloatArray(), ((Tensor) m.get("b")).toFloatArray());
        assertEquals(7, m.get("n"));
        ObjectCodec codec = w.get(0).options().codec();
        List<Object> twice = List.of(List.of(new RpcPayload.TensorSlot(0), new RpcPayload.TensorSlot(0)),
                List.of(List.of("FLOAT32", new int[] {1}, false)));
        RpcPayload.Decoded d = RpcPayload.decode(w.get(0).rrefs(), codec.encode(twice), 4);
        IllegalArgumentException bad = assertThrows(IllegalArgumentException.class, d::values);
        assertTrue(bad.getMessage().contains("wrongly"), bad.getMessage());
    }

    @Test
    void tensorArgumentsAreSnapshotsAndAnyMemoryWorksAndFramesAreReleased() throws Exception {
        List<RpcAgent> w = start(2, new RpcRegistry());
        Tensor x = Tensor.ones(65536);
        Future<Tensor> echoed = w.get(0).rpcAsync("worker1", "builtin.echo", x);
        x.filli(7);
        assertEquals(65536.0, echoed.await(10, TimeUnit.SECONDS).sum().item(), "the peer saw a later change");
        Tensor onHeap = Tensor.fromSegment(MemorySegment.ofArray(new float[] {1, 2, 3}),
                DType.FLOAT32, 3);
        assertArrayEquals(new float[] {1, 2, 3},
                ((Tensor) w.get(0).rpcSync("worker1", "builtin.echo", onHeap)).toFloatArray());
        Tensor mib = Tensor.ones(1 << 18);
        for (int i = 0; i < 300; i++) {
            w.get(0).rpcSync("worker1", "builtin.echo", mib);
        }
        long used = ((ByteBufAllocatorMetricProvider) ByteBufAllocator.DEFAULT)
                .metric().usedDirectMemory();
        assertTrue(used < 128L << 20, "300 frames of 1 MiB left " + (used >> 20) + " MiB of direct memory in use");
    }

    @Test
    void aFunctionMayCallAThirdWorkerAndAsyncFunctionsAnswerLater() throws Exception {
        List<RpcAgent> holder = agents;
        RpcRegistry registry = new RpcRegistry()
                .register("test.relay", args -> holder.get(1).rpcSync("worker2", "builtin.add", args.get(0), 1))
                .registerAsync("test.later", args -> holder.get(2).vertx().timer(50)
                        .map(t -> "late " + args.get(0)));
        List<RpcAgent> w = start(3, registry);
        assertEquals(11L, (Long) w.get(0).rpcSync("worker1", "test.relay", 10));
        assertEquals("late x", w.get(0).rpcSync("worker2", "test.later", "x"));
    }

    @Test
    void remoteExceptionsCarryTheirTypeMessageAndWorker() throws Exception {
        RpcRegistry registry = new RpcRegistry().register("test.fail", args -> {
            throw new IllegalStateException("broken on purpose");
        });
        List<RpcAgent> w = start(2, registry);
        RemoteException e = assertThrows(RemoteException.class, () -> w.get(0).rpcSync("worker1", "test.fail"));
        assertEquals("worker1", e.worker());
        assertEquals(IllegalStateException.class.getName(), e.remoteType());
        assertEquals("broken on purpose", e.remoteMessage());
        assertTrue(e.remoteStack().contains("RpcTest"), e.remoteStack());
        RemoteException unknown = assertThrows(RemoteException.class, () -> w.get(0).rpcSync("worker1", "no.such"));
        assertTrue(unknown.getMessage().contains("no function 'no.such' is registered on worker worker1"),
                unknown.getMessage());
    }

    @Test
    void badTargetsAndArgumentsAreRefusedAtTheCaller() throws Exception {
        List<RpcAgent> w = start(2, new RpcRegistry());
        IllegalArgumentException noWorker = assertThrows(IllegalArgumentException.class,
                () -> w.get(0).rpcAsync("worker9", "builtin.echo", 1));
        assertTrue(noWorker.getMessage().contains("[worker0, worker1]"), noWorker.getMessage());
        assertThrows(IllegalArgumentException.class, () -> w.get(0).rpcAsync(5, "builtin.echo", 1));
        IllegalArgumentException type = assertThrows(IllegalArgumentException.class,
                () -> w.get(0).rpcAsync("worker1", "builtin.echo", new Object()));
        assertTrue(type.getMessage().contains("java.lang.Object"), type.getMessage());
        assertThrows(IllegalArgumentException.class, () -> w.get(0).rpcAsync("worker1", "has space", 1));
        assertThrows(IllegalArgumentException.class, () -> w.get(0).rpcAsync(
                new WorkerInfo("worker1", 0), Duration.ofSeconds(1), "builtin.echo", 1));
    }

    @Test
    void aCallPastItsTimeoutFailsAndTheWorkerStaysUsable() throws Exception {
        RpcRegistry registry = new RpcRegistry().register("test.slow", args -> {
            Thread.sleep(2000);
            return "done";
        });
        List<RpcAgent> w = start(2, registry);
        long t0 = System.nanoTime();
        Future<Object> slow = w.get(0).rpcAsync(w.get(0).workerInfo(1), Duration.ofMillis(200), "test.slow");
        ExecutionException e = assertThrows(ExecutionException.class,
                () -> slow.toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS));
        assertInstanceOf(RpcTimeoutException.class, e.getCause());
        assertTrue(System.nanoTime() - t0 < 1_500_000_000L, "the timeout fired late");
        assertEquals(5L, (Long) w.get(0).rpcSync("worker1", "builtin.add", 2, 3));
    }

    @Test
    void aWorkerWithoutTheSharedSecretIsRefused() throws Exception {
        JobSecret secret = JobSecret.of("the secret of this job".getBytes(StandardCharsets.UTF_8));
        JobSecret other = JobSecret.of("the secret of another job".getBytes(StandardCharsets.UTF_8));
        List<RpcAgent> w = start(3, r -> RpcOptions.builder().registry(new RpcRegistry())
                .secret(r == 2 ? other : secret));
        assertEquals(3L, (Long) w.get(0).rpcSync("worker1", "builtin.add", 1, 2));
        RpcException e = assertThrows(RpcException.class, () -> w.get(0).rpcSync("worker2", "builtin.add", 1, 2));
        assertTrue(e.getMessage().contains("worker2 (rank 2)") && e.getMessage().contains("could not be joined")
                && e.getMessage().contains("a wrong proof of the job's secret"), e.getMessage());
        RpcException back = assertThrows(RpcException.class, () -> w.get(2).rpcSync("worker1", "builtin.add", 1, 2));
        assertTrue(back.getMessage().contains("worker1 (rank 1)")
                && back.getMessage().contains("a wrong proof of the job's secret"), back.getMessage());
    }

    @Test
    void garbageAndOversizedFramesCloseOnlyTheirConnection() throws Exception {
        List<RpcAgent> w = start(2, r -> RpcOptions.builder().registry(new RpcRegistry()).maxMessageBytes(4096));
        String[] address = new String(store.get("rpc/worker/1").await(5, TimeUnit.SECONDS), StandardCharsets.UTF_8)
                .split("\n");
        NetClient client = vertx.createNetClient();
        for (Buffer bad : List.of(Buffer.buffer("GET / HTTP/1.1\r\n\r\n".repeat(3)),
                RpcFrame.encode(RpcFrame.CALL, 1, new byte[0]).setIntLE(16, 1 << 30))) {
            NetSocket s = client.connect(Integer.parseInt(address[2]), address[1]).await(5, TimeUnit.SECONDS);
            Promise<Void> closed = Promise.promise();
            s.closeHandler(v -> closed.tryComplete());
            s.write(bad);
            closed.future().await(5, TimeUnit.SECONDS);
        }
        assertEquals(7L, (Long) w.get(0).rpcSync("worker1", "builtin.add", 3, 4), "the worker still serves");
        client.close();
    }

    @Test
    void gracefulShutdownLetsCallsInFlightFinish() throws Exception {
        RpcRegistry registry = new RpcRegistry().register("test.slow", args -> {
            Thread.sleep(300);
            return "finished";
        });
        List<RpcAgent> w = start(2, registry);
        Future<String> inFlight = w.get(0).rpcAsync("worker1", "test.slow");
        Future<Void> s0 = w.get(0).shutdown(true);
        Future<Void> s1 = w.get(1).shutdown(true);
        assertEquals("finished", inFlight.await(10, TimeUnit.SECONDS));
        s0.await(10, TimeUnit.SECONDS);
        s1.await(10, TimeUnit.SECONDS);
        assertThrows(IllegalStateException.class, () -> w.get(0).rpcAsync("worker1", "builtin.echo", 1));
    }

    @Test
    void aLostWorkerFailsItsPendingCallsNamingItAndTheOthersGoOn() throws Exception {
        RpcRegistry registry = new RpcRegistry().register("test.slow", args -> {
            Thread.sleep(5000);
            return "never";
        });
        List<RpcAgent> w = start(3, registry);
        Future<Object> pending = w.get(0).rpcAsync("worker1", "test.slow");
        Thread.sleep(200);
        w.get(1).shutdown(false);
        ExecutionException e = assertThrows(ExecutionException.class,
                () -> pending.toCompletionStage().toCompletableFuture().get(5, TimeUnit.SECONDS));
        assertInstanceOf(RpcException.class, e.getCause());
        assertTrue(e.getCause().getMessage().contains("worker1 (rank 1)"), e.getCause().getMessage());
        assertEquals(2L, (Long) w.get(0).rpcSync("worker2", "builtin.add", 1, 1));
    }

    @Test
    void aGracefulShutdownEndsAtOnceNamingAWorkerKnownGoneEvenWhereNothingTalkedToIt() throws Exception {
        List<RpcAgent> w = start(3, r -> RpcOptions.builder().registry(new RpcRegistry())
                .initTimeout(Duration.ofSeconds(40)));
        assertEquals(2L, (Long) w.get(0).rpcSync("worker2", "builtin.add", 1, 1), "worker0 has a connection to 2");
        w.get(2).shutdown(false);
        RpcWorkers.eventually(() -> !w.get(0).calls().gone().isEmpty(), "worker0 notices worker2 is gone");
        long t0 = System.nanoTime();
        // worker1 never talked to worker2: it learns from worker0, through the store.
        Future<Void> s1 = w.get(1).shutdown(true);
        Thread.sleep(300);
        Future<Void> s0 = w.get(0).shutdown(true);
        for (Future<Void> s : List.of(s0, s1)) {
            Throwable e = s.toCompletionStage().toCompletableFuture().handle((v, x) -> x).get(10, TimeUnit.SECONDS);
            assertInstanceOf(RpcException.class, e);
            assertTrue(e.getMessage().contains("worker worker2 (rank 2) closed the connection")
                    && e.getMessage().contains("(learnt by worker0 (rank 0))"), e.getMessage());
            assertTrue(e.getMessage().matches("the graceful shutdown of worker\\d \\(rank \\d\\) failed after"
                    + " \\d+\\.\\d s \\(its timeout: 40 s\\): .*"), e.getMessage());
        }
        assertTrue(System.nanoTime() - t0 < TimeUnit.SECONDS.toNanos(5), "not the 40 s timeout");
        assertTrue(w.get(0).isClosed() && w.get(1).isClosed());
    }

    @Test
    void aGracefulShutdownHonoursItsTimeoutAndShutdownFalseAbortsOneUnderWay() throws Exception {
        List<RpcAgent> w = start(2, new RpcRegistry());
        long t0 = System.nanoTime();
        RpcException e = assertThrows(RpcException.class, () -> w.get(0).shutdown(Duration.ofMillis(1500)));
        double took = (System.nanoTime() - t0) / 1e9;
        assertTrue(took > 1.4 && took < 4, took + " s");
        assertTrue(e.getMessage().contains("failed after 1.5 s (its timeout: 1.5 s)"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> w.get(1).shutdown(true, Duration.ZERO));
        Future<Void> graceful = w.get(1).shutdown(true);
        Thread.sleep(200);
        assertTrue(!graceful.isComplete(), "waits for worker0, which left without counting in");
        w.get(1).shutdown(false);
        Throwable aborted = graceful.toCompletionStage().toCompletableFuture().handle((v, x) -> x)
                .get(2, TimeUnit.SECONDS);
        assertTrue(aborted != null && aborted.getMessage().contains("was aborted"), String.valueOf(aborted));
        assertTrue(w.get(1).isClosed());
    }

    @Test
    void anArgumentLargerThanTheCalleeAcceptsFailsThatCallAlone() throws Exception {
        RpcRegistry registry = new RpcRegistry().register("test.slow", args -> {
            Thread.sleep(300);
            return "slow";
        });
        List<RpcAgent> w = start(2, r -> RpcOptions.builder().registry(registry).maxMessageBytes(4096));
        Future<String> other = w.get(0).rpcAsync("worker1", "test.slow");
        RpcException e = assertThrows(RpcException.class,
                () -> w.get(0).rpcSync("worker1", "builtin.echo", Tensor.zeros(4096)));
        assertTrue(e.getMessage().contains("more than the 4096 worker worker1 (rank 1) accepts"), e.getMessage());
        assertEquals("slow", other.await(10, TimeUnit.SECONDS));
    }

    @Test
    void failuresThatAreHardToReportStillAnswerAtOnce() throws Exception {
        RpcRegistry registry = new RpcRegistry()
                .register("test.evil", args -> {
                    throw new IllegalStateException() {
                        @Override
                        public String getMessage() {
                            throw new UnsupportedOperationException("no message for you");
                        }
                    };
                })
                .register("test.long", args -> {
                    throw new IllegalArgumentException("x".repeat(10_000));
                });
        List<RpcAgent> w = start(2, r -> RpcOptions.builder().registry(registry).maxMessageBytes(4096)
                .timeout(Duration.ofSeconds(20)));
        long t0 = System.nanoTime();
        RemoteException evil = assertThrows(RemoteException.class, () -> w.get(0).rpcSync("worker1", "test.evil"));
        assertTrue(evil.remoteMessage().contains("could not be read"), evil.remoteMessage());
        RemoteException shortened = assertThrows(RemoteException.class,
                () -> w.get(0).rpcSync("worker1", "test.long"));
        assertTrue(shortened.remoteMessage().length() < 3000, "the message was not shortened");
        assertTrue(System.nanoTime() - t0 < 5_000_000_000L, "an answer waited for the timeout");
        assertEquals(2L, (Long) w.get(0).rpcSync("worker1", "builtin.add", 1, 1), "the connection survived");
    }

    @Test
    void shutdownIsIdempotentAndTheDefaultAgentGoesWithIt() throws Exception {
        List<RpcAgent> w = start(2, new RpcRegistry());
        Future<Void> first = w.get(0).shutdown(true);
        assertTrue(first == w.get(0).shutdown(true), "a second shutdown returns the first one's future");
        w.get(1).shutdown(true).await(10, TimeUnit.SECONDS);
        first.await(10, TimeUnit.SECONDS);
        for (RpcAgent a : w) {
            assertTrue(a.isClosed());
        }
        try {
            assertTrue(!Rpc.agent().isClosed(), "Rpc.agent() returned a closed agent");
        } catch (IllegalStateException noneOpen) {
            assertTrue(noneOpen.getMessage().contains("call Rpc.init first"), noneOpen.getMessage());
        }
    }

    @Test
    void functionsRegisteredOnTheEventLoopRunThereAsTheWorkersAgentAndOthersOnThePool() throws Exception {
        RpcRegistry registry = new RpcRegistry()
                .registerOnEventLoop("test.here", a -> List.of(Context.isOnEventLoopThread(),
                        RpcAgent.current().self().name(), ((Number) a.get(0)).longValue() + 1))
                .register("test.pool", a -> Context.isOnEventLoopThread());
        List<RpcAgent> w = start(2, registry);
        assertEquals(List.of(true, "worker1", 42L), w.get(0).rpcSync("worker1", "test.here", 41));
        assertEquals(false, w.get(0).rpcSync("worker1", "test.pool"));
        // A call to itself, made on this thread, runs on the pool: no event loop read it.
        assertEquals(List.of(false, "worker0", 1L), w.get(0).rpcSync("worker0", "test.here", 0));
        // Registering the name again without the event loop moves it back to the pool.
        registry.register("test.here", a -> Context.isOnEventLoopThread());
        assertEquals(false, w.get(0).rpcSync("worker1", "test.here"));
    }

    @Test
    void aBlockingCallInsideAnEventLoopFunctionFailsThatCallAndTheLoopServesOn() throws Exception {
        RpcRegistry registry = new RpcRegistry()
                .registerOnEventLoop("test.blocks", a -> RpcAgent.current().rpcSync("worker0", "builtin.echo", 1));
        List<RpcAgent> w = start(2, registry);
        RemoteException e = assertThrows(RemoteException.class, () -> w.get(0).rpcSync("worker1", "test.blocks"));
        assertTrue(e.getMessage().contains("event-loop thread, which must never block"), e.getMessage());
        assertEquals(7L, (Long) w.get(0).rpcSync("worker1", "builtin.add", 3, 4));
    }

    @Test
    void eachRankThreadHasTheFirstAgentItStartedAsDefault() throws Exception {
        // As tensorbus launch --ranks-as-threads runs them: rank threads with environments of their own.
        HashStore store = new HashStore(Duration.ofSeconds(20));
        Map<Integer, RpcAgent> started = new ConcurrentHashMap<>();
        Map<Integer, RpcAgent> seen = new ConcurrentHashMap<>();
        Map<Integer, Throwable> failed = RankThreadsForTest.run(2, rank -> {
            RpcAgent agent = Rpc.init("worker" + rank, rank, 2, RpcOptions.builder().store(store)
                    .timeout(Duration.ofSeconds(20)).build()).await(20, TimeUnit.SECONDS);
            started.put(rank, agent);
            Thread child = new Thread(() -> seen.put(rank, Rpc.agent()));
            child.start();
            child.join();
        });
        try {
            assertEquals(Map.of(), failed);
            for (int r = 0; r < 2; r++) {
                assertTrue(started.get(r) == seen.get(r), "worker" + r + "'s default agent: " + seen.get(r).self());
            }
        } finally {
            List<Future<Void>> down = started.values().stream().map(a -> a.shutdown(true)).toList();
            for (Future<Void> f : down) {
                f.await(20, TimeUnit.SECONDS);
            }
        }
    }

    @Test
    void badTimeoutsAndBlockingOnAnEventLoopAreRefusedBeforeAnythingIsSent() throws Exception {
        AtomicInteger runs = new AtomicInteger();
        RpcRegistry registry = new RpcRegistry().register("test.count", args -> runs.incrementAndGet());
        List<RpcAgent> w = start(2, registry);
        assertThrows(IllegalArgumentException.class,
                () -> w.get(0).rpcAsync(w.get(0).workerInfo(1), Duration.ofNanos(500), "test.count"));
        Promise<Void> onLoop = Promise.promise();
        vertx.runOnContext(x -> {
            try {
                w.get(0).rpcSync("worker1", "test.count");
                onLoop.fail("rpcSync ran on an event loop");
            } catch (IllegalStateException expected) {
                onLoop.complete();
            }
        });
        onLoop.future().await(10, TimeUnit.SECONDS);
        assertEquals(0, runs.get(), "nothing was sent");
        w.get(0).shutdown(true);
        w.get(1).shutdown(true).await(10, TimeUnit.SECONDS);
    }

    @Test
    void aStoreOutlivesAJobThatShutDownGracefully() throws Exception {
        List<RpcAgent> first = start(2, new RpcRegistry());
        Future.all(first.get(0).shutdown(true), first.get(1).shutdown(true)).await(10, TimeUnit.SECONDS);
        Future<RpcAgent> alone = Rpc.init("worker0", 0, 2, RpcOptions.builder().store(store).vertx(vertx)
                .initTimeout(Duration.ofMillis(500)).build());
        assertThrows(ExecutionException.class,
                () -> alone.toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS),
                "the first job's worker1 must not stand in for a missing one");
        agents.clear();
        List<RpcAgent> second = start(2, new RpcRegistry());
        assertEquals(4L, (Long) second.get(1).rpcSync("worker0", "builtin.add", 2, 2));
        Future.all(second.get(0).shutdown(true), second.get(1).shutdown(true)).await(10, TimeUnit.SECONDS);
    }

    @Test
    void twoWorkersWithOneNameFailInitNamingBothRanks() {
        Future<RpcAgent> a = Rpc.init("twin", 0, 2, RpcOptions.builder().store(store).vertx(vertx).build());
        Future<RpcAgent> b = Rpc.init("twin", 1, 2, RpcOptions.builder().store(store).vertx(vertx).build());
        for (Future<RpcAgent> f : List.of(a, b)) {
            ExecutionException e = assertThrows(ExecutionException.class,
                    () -> f.toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS));
            assertTrue(e.getCause().getMessage().contains("'twin' is taken by rank 0 and rank 1"),
                    e.getCause().getMessage());
        }
    }
}
