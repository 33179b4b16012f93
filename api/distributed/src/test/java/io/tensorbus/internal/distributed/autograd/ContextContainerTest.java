package io.tensorbus.internal.distributed.autograd;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tensorbus.DType;
import io.tensorbus.tensor.Tensor;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Context and message ids, first contact, release and gradient accumulation of one worker's contexts. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class ContextContainerTest {

    @Test
    void idsCarryTheWorkerInTheTopSixteenBitsAndNeverRepeat() {
        ContextContainer w3 = new ContextContainer(3);
        ContextContainer w4 = new ContextContainer(4);
        long c3 = w3.newContext().id();
        long c4 = w4.newContext().id();
        assertEquals(3, ContextContainer.workerOf(c3));
        assertEquals(4, ContextContainer.workerOf(c4));
        assertEquals(3L << 48, c3, "the first context of worker 3");
        assertEquals(3, ContextContainer.workerOf(w3.newMessageId()));
        assertFalse(c3 == w3.newContext().id());
        assertEquals("3:1", ContextContainer.describe(w3.newContext().id() - 1));
    }

    @Test
    void threadsMakingContextsAtOnceGetDistinctIds() throws Exception {
        ContextContainer c = new ContextContainer(1);
        Set<Long> ids = ConcurrentHashMap.newKeySet();
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < 4; t++) {
            threads.add(Thread.ofPlatform().start(() -> {
                for (int i = 0; i < 500; i++) {
                    ids.add(c.newContext().id());
                    ids.add(c.newMessageId() | (1L << 47));
                }
            }));
        }
        for (Thread t : threads) {
            t.join();
        }
        assertEquals(4000, ids.size());
        assertEquals(2000, c.size());
    }

    @Test
    void aPeersContextIsCreatedOnFirstContactAndFoundAfter() {
        ContextContainer here = new ContextContainer(0);
        long theirs = new ContextContainer(2).newContext().id();
        DistAutogradContext first = here.getOrCreate(theirs);
        assertSame(first, here.getOrCreate(theirs));
        assertSame(first, here.retrieve(theirs));
        assertEquals(1, here.size());
    }

    @Test
    void unknownAndReleasedContextsAreRefusedAndNotRevived() {
        ContextContainer here = new ContextContainer(0);
        DistAutogradContext mine = here.newContext();
        assertTrue(here.release(mine.id()));
        assertFalse(here.release(mine.id()));
        assertTrue(mine.isReleased());
        IllegalArgumentException gone = assertThrows(IllegalArgumentException.class, () -> here.retrieve(mine.id()));
        assertTrue(gone.getMessage().contains("no distributed autograd context 0:0 on worker 0"), gone.getMessage());
        // A peer naming a context of ours that is gone must not bring it back.
        assertThrows(IllegalArgumentException.class, () -> here.getOrCreate(mine.id()));
        assertEquals(0, here.size());
        assertThrows(IllegalStateException.class, mine::gradients);
    }

    @Test
    void badWorkerIdsAreRefused() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new ContextContainer(-1));
        assertTrue(e.getMessage().contains("0..32767"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> new ContextContainer(1 << 15));
    }

    @Test
    void gradientsAccumulateByTensorIdentityAndLeaveGradAlone() {
        DistAutogradContext context = new ContextContainer(0).newContext();
        Tensor w = Tensor.zeros(DType.FLOAT32, 2).requiresGrad(true);
        Tensor sameValues = Tensor.zeros(DType.FLOAT32, 2).requiresGrad(true);
        Tensor g = Tensor.of(new float[] {1f, 2f}, 2);
        context.accumulateGrad(w, g);
        g.addi(Tensor.of(new float[] {10f, 10f}, 2));  // the caller reuses its buffer: the context kept a copy
        context.accumulateGrad(w, Tensor.of(new float[] {0.5f, 0.5f}, 2));
        Map<Tensor, Tensor> grads = context.gradients();
        assertEquals(1, grads.size(), "equal values, different tensors: only w has a gradient");
        assertFalse(grads.containsKey(sameValues));
        assertArrayEquals(new float[] {1.5f, 2.5f}, grads.get(w).toFloatArray());
        assertEquals(null, w.grad(), ".grad is untouched");
        IllegalArgumentException bad = assertThrows(IllegalArgumentException.class,
                () -> context.accumulateGrad(w, Tensor.zeros(DType.FLOAT32, 3)));
        assertTrue(bad.getMessage().contains("shape [3]"), bad.getMessage());
    }

    @Test
    void knownWorkersAreRemembered() {
        DistAutogradContext context = new ContextContainer(0).newContext();
        context.addKnownWorker(1);
        context.addKnownWorker(2);
        context.addKnownWorker(1);
        assertEquals(Set.of(1, 2), context.knownWorkers());
    }
}
