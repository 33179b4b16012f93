package io.tensorbus.mutiny;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.smallrye.mutiny.Uni;
import io.tensorbus.distributed.rpc.RRef;
import io.tensorbus.distributed.rpc.RemoteException;
import io.tensorbus.distributed.rpc.RpcAgent;
import io.tensorbus.distributed.rpc.RpcRegistry;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The RPC faces against one worker that calls itself. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class UniRpcAgentTest {
    private static final Duration LONG = Duration.ofSeconds(20);
    private final AtomicInteger counted = new AtomicInteger();
    private RpcJob job;
    private RpcAgent agent;
    private UniRpcAgent uni;

    @BeforeEach
    void setUp() throws Exception {
        job = new RpcJob(1, () -> new RpcRegistry().register("test.count", args -> counted.incrementAndGet()));
        agent = job.get(0);
        uni = new UniRpcAgent(agent);
    }

    @AfterEach
    void tearDown() throws Exception {
        job.close();
    }

    private static Throwable failureOf(Uni<?> u) {
        return u.onItem().<Throwable>transform(item -> null).onFailure().recoverWithItem(e -> e).await().atMost(LONG);
    }

    @Test
    void aCallRunsOncePerSubscriptionAndNotBefore() {
        Uni<Integer> call = uni.rpcAsync("worker0", "test.count");
        assertEquals(0, counted.get(), "building the Uni made the call");
        assertEquals(1, call.await().atMost(LONG));
        assertEquals(2, call.await().atMost(LONG));
        assertEquals(3L, (Long) uni.rpcAsync(0, "builtin.add", 1, 2).await().atMost(LONG));
        assertEquals(6L, (Long) uni.rpcAsync(agent.workerInfo(0), LONG, "builtin.mul", 2, 3).await().atMost(LONG));
    }

    @Test
    void refusalsAndRemoteFailuresFailTheUni() {
        assertTrue(failureOf(uni.rpcAsync("worker9", "builtin.add", 1, 2)) instanceof IllegalArgumentException);
        Throwable remote = failureOf(uni.rpcAsync("worker0", "builtin.add", "one", 2));
        assertTrue(remote instanceof RemoteException, "got " + remote);
        uni.shutdown(false).await().atMost(LONG);
        assertTrue(failureOf(uni.rpcAsync("worker0", "builtin.add", 1, 2)) instanceof IllegalStateException);
    }

    @Test
    void aReferenceIsFetchedAndCalledThroughItsFace() {
        RRef<Long> sum = agent.remote("worker0", "builtin.add", 2, 3);
        assertEquals(5L, new UniRRef<>(sum).toHere().await().atMost(LONG));
        assertEquals(5L, new UniRRef<>(sum).toHere(LONG).await().atMost(LONG));
        UniRRef<List<Integer>> list = new UniRRef<>(RRef.of(agent, List.of(1, 2, 3)));
        Integer size = list.<List, Integer>rpcAsync(List.class, l -> l.size()).await().atMost(LONG);
        assertEquals(3, size);
        assertTrue(failureOf(list.toHere(Duration.ZERO)) instanceof IllegalArgumentException);
    }

    @Test
    void remoteMakesItsCallOnSubscriptionAndEmitsTheReference() {
        Uni<UniRRef<Integer>> remote = uni.remote("worker0", "test.count");
        assertEquals(0, counted.get(), "building the Uni made the call");
        assertEquals(1, remote.await().atMost(LONG).toHere().await().atMost(LONG));
        assertEquals(5L, uni.<Long>remote(0, "builtin.add", 2, 3).await().atMost(LONG).toHere().await().atMost(LONG));
        assertEquals(6L, uni.<Long>remote(agent.workerInfo(0), LONG, "builtin.mul", 2, 3).await().atMost(LONG)
                .toHere().await().atMost(LONG));
        assertTrue(failureOf(uni.remote("worker9", "builtin.add", 1, 2)) instanceof IllegalArgumentException);
    }

    @Test
    void nullsAreRefused() {
        assertThrows(NullPointerException.class, () -> new UniRpcAgent(null));
        assertThrows(NullPointerException.class, () -> new UniRRef<>(null));
    }
}
