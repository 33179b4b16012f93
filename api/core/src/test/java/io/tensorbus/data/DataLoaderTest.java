package io.tensorbus.data;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tensorbus.tensor.Tensor;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(60)
class DataLoaderTest {
    /** Inputs [n, 2] with row i = (i, -i), targets [n] = i. */
    private static TensorDataset dataset(int n) {
        float[] x = new float[2 * n];
        long[] y = new long[n];
        for (int i = 0; i < n; i++) {
            x[2 * i] = i;
            x[2 * i + 1] = -i;
            y[i] = i;
        }
        return new TensorDataset(Tensor.of(x, n, 2), Tensor.of(y, n));
    }

    /** A dataset of 0-d tensors i, that throws at {@code bad} and sleeps {@code sleepMs} per item. */
    private record Probe(int size, int bad, long sleepMs, AtomicReference<Thread> caller) implements Dataset<Tensor> {
        Probe(int size, int bad, long sleepMs) {
            this(size, bad, sleepMs, new AtomicReference<>());
        }

        @Override
        public Tensor get(int index) {
            caller.set(Thread.currentThread());
            if (index == bad) {
                throw new IllegalStateException("broken item " + index);
            }
            if (sleepMs > 0) {
                try {
                    Thread.sleep(sleepMs);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException("interrupted", e);
                }
            }
            return Tensor.scalar(index);
        }
    }

    private static List<long[]> epoch(Iterable<Batch> loader) {
        List<long[]> out = new ArrayList<>();
        for (Batch b : loader) {
            out.add(b.targets().toLongArray());
        }
        return out;
    }

    private static long[] flat(List<long[]> batches) {
        return batches.stream().flatMapToLong(Arrays::stream).toArray();
    }

    private static long[] range(int n) {
        long[] r = new long[n];
        Arrays.setAll(r, i -> i);
        return r;
    }

    @Test
    void sequentialBatchesCoverEveryIndexOnceWithAPartialLastBatch() {
        DataLoader<List<Tensor>> loader = DataLoader.of(dataset(10), 4);
        assertEquals(3, loader.size());
        List<long[]> batches = epoch(loader);
        assertEquals(3, batches.size());
        assertArrayEquals(new long[] {8, 9}, batches.get(2));
        assertArrayEquals(range(10), flat(batches));
    }

    @Test
    void inputsAndTargetsStayTogether() {
        for (Batch b : DataLoader.builder(dataset(9)).batchSize(4).shuffle(true).seed(3).build()) {
            long[] y = b.targets().toLongArray();
            for (int j = 0; j < y.length; j++) {
                assertEquals(y[j], b.inputs().getDouble(j, 0));
                assertEquals(-y[j], b.inputs().getDouble(j, 1));
            }
        }
    }

    @Test
    void shuffledEpochsCoverEveryIndexOnceReproduciblyAndDiffer() {
        DataLoader<List<Tensor>> a = DataLoader.builder(dataset(50)).batchSize(8).shuffle(true).seed(1234).build();
        DataLoader<List<Tensor>> b = DataLoader.builder(dataset(50)).batchSize(8).shuffle(true).seed(1234).build();
        long[] a0 = flat(epoch(a));
        long[] a1 = flat(epoch(a));
        assertArrayEquals(a0, flat(epoch(b)));
        assertArrayEquals(a1, flat(epoch(b)));
        assertFalse(Arrays.equals(a0, a1));
        assertFalse(Arrays.equals(a0, range(50)));
        long[] sorted = a1.clone();
        Arrays.sort(sorted);
        assertArrayEquals(range(50), sorted);
        a.setEpoch(1);
        assertArrayEquals(a1, flat(epoch(a)));
        DataLoader<List<Tensor>> other = DataLoader.builder(dataset(50)).batchSize(8).shuffle(true).seed(99).build();
        assertFalse(Arrays.equals(a0, flat(epoch(other))));
    }

    @Test
    void dropLastLeavesOutTheIncompleteBatch() {
        DataLoader<List<Tensor>> loader = DataLoader.builder(dataset(10)).batchSize(4).dropLast(true).build();
        assertEquals(2, loader.size());
        List<long[]> batches = epoch(loader);
        assertEquals(2, batches.size());
        assertArrayEquals(range(8), flat(batches));
    }

    @Test
    void defaultCollateStacksSingleTensorsAndCustomCollateIsUsed() {
        Batch b = DataLoader.of(new Probe(5, -1, 0), 5).iterator().next();
        assertNull(b.targets());
        assertArrayEquals(new float[] {0, 1, 2, 3, 4}, b.inputs().toFloatArray());
        TensorDataset d = dataset(6);
        DataLoader<List<Tensor>> viaStack = DataLoader.builder(d).batchSize(3).shuffle(true).seed(5)
                .collate(Collate::stack).build();
        DataLoader<List<Tensor>> viaGather = DataLoader.builder(d).batchSize(3).shuffle(true).seed(5).build();
        Batch s = viaStack.iterator().next();
        Batch g = viaGather.iterator().next();
        assertArrayEquals(s.inputs().shape(), g.inputs().shape());
        assertArrayEquals(s.inputs().toFloatArray(), g.inputs().toFloatArray());
        assertArrayEquals(s.targets().toLongArray(), g.targets().toLongArray());
    }

    @Test
    void badItemsForTheDefaultCollateAreExplained() {
        Dataset<String> strings = new Dataset<>() {
            @Override
            public int size() {
                return 2;
            }

            @Override
            public String get(int index) {
                return "s" + index;
            }
        };
        DataLoaderException e = assertThrows(DataLoaderException.class,
                () -> DataLoader.of(strings, 2).iterator().next());
        assertInstanceOf(IllegalArgumentException.class, e.getCause());
        assertTrue(e.getCause().getMessage().contains("item 0 is a java.lang.String"), e.getCause().getMessage());
    }

    @Test
    void loaderThreadIsVirtualAndNotTheComputePool() {
        Probe p = new Probe(4, -1, 0);
        BatchIterator it = DataLoader.of(p, 2).iterator();
        it.next();
        Thread t = p.caller().get();
        assertTrue(t.isVirtual());
        assertTrue(t.getName().startsWith("tensorbus-data-loader-"), t.getName());
        it.close();
    }

    @Test
    void loaderExceptionIsRethrownWithTheBatchIndex() {
        DataLoader<Tensor> loader = DataLoader.builder(new Probe(10, 5, 0)).batchSize(2).build();
        BatchIterator it = loader.iterator();
        it.next();
        it.next();
        DataLoaderException e = assertThrows(DataLoaderException.class, it::next);
        assertEquals(2, e.batchIndex());
        assertEquals(0, e.epoch());
        assertTrue(e.getMessage().contains("epoch 0, batch 2: loading indices [4, 5] failed in the loader thread"),
                e.getMessage());
        assertInstanceOf(IllegalStateException.class, e.getCause());
        assertFalse(it.hasNext());
        assertThrows(NoSuchElementException.class, it::next);
    }

    @Test
    void exceptionWithoutPrefetchAlsoNamesTheBatch() {
        DataLoader<Tensor> loader = DataLoader.builder(new Probe(10, 5, 0)).batchSize(2).prefetch(0).build();
        BatchIterator it = loader.iterator();
        assertNull(it.loaderThread());
        it.next();
        it.next();
        DataLoaderException e = assertThrows(DataLoaderException.class, it::next);
        assertEquals(2, e.batchIndex());
    }

    @Test
    void closingStopsTheLoaderThread() throws InterruptedException {
        BatchIterator it = DataLoader.builder(new Probe(1000, -1, 1)).batchSize(1).prefetch(2).build().iterator();
        it.next();
        Thread t = it.loaderThread();
        assertNotNull(t);
        assertTrue(t.isAlive());
        it.close();
        t.join(Duration.ofSeconds(10));
        assertFalse(t.isAlive());
        assertFalse(it.hasNext());
    }

    @Test
    void finishingTheEpochEndsTheLoaderThread() throws InterruptedException {
        BatchIterator it = DataLoader.of(dataset(10), 3).iterator();
        Thread t = it.loaderThread();
        while (it.hasNext()) {
            it.next();
        }
        t.join(Duration.ofSeconds(10));
        assertFalse(t.isAlive());
    }

    private static Thread startAndAbandon(DataLoader<?> loader) {
        BatchIterator it = loader.iterator();
        it.next();
        return it.loaderThread();
    }

    @Test
    void abandoningTheIteratorStopsTheLoaderThread() throws InterruptedException {
        DataLoader<List<Tensor>> loader = DataLoader.builder(dataset(1000)).batchSize(1).prefetch(1).build();
        Thread t = startAndAbandon(loader);
        for (int i = 0; i < 200 && t.isAlive(); i++) {
            System.gc();
            t.join(Duration.ofMillis(50));
        }
        assertFalse(t.isAlive(), "the loader thread of an unreachable iterator is still running");
    }

    @Test
    void waitingForASlowBatchTimesOut() throws InterruptedException {
        DataLoader<Tensor> loader = DataLoader.builder(new Probe(4, -1, 30_000)).batchSize(1)
                .timeout(Duration.ofMillis(200)).build();
        BatchIterator it = loader.iterator();
        Thread t = it.loaderThread();
        DataLoaderException e = assertThrows(DataLoaderException.class, it::next);
        assertEquals(0, e.batchIndex());
        assertTrue(e.getMessage().contains("timed out after PT0.2S waiting for the loader thread"), e.getMessage());
        t.join(Duration.ofSeconds(10));
        assertFalse(t.isAlive());
    }

    @Test
    void loaderGivesUpWhenTheConsumerTakesNothing() throws InterruptedException {
        DataLoader<List<Tensor>> loader = DataLoader.builder(dataset(4)).batchSize(1).prefetch(1)
                .timeout(Duration.ofMillis(100)).build();
        BatchIterator it = loader.iterator();
        it.next();
        it.loaderThread().join(Duration.ofSeconds(10));
        assertFalse(it.loaderThread().isAlive());
        assertArrayEquals(new long[] {1}, it.next().targets().toLongArray());
        DataLoaderException e = assertThrows(DataLoaderException.class, it::next);
        assertEquals(2, e.batchIndex());
        assertTrue(e.getMessage().contains("gave up after waiting PT0.1S"), e.getMessage());
    }

    @Test
    void optionsAreChecked() {
        TensorDataset d = dataset(3);
        assertThrows(IllegalArgumentException.class, () -> DataLoader.builder(d).batchSize(0));
        assertThrows(IllegalArgumentException.class, () -> DataLoader.builder(d).prefetch(-1));
        assertThrows(IllegalArgumentException.class, () -> DataLoader.builder(d).timeout(Duration.ZERO));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> DataLoader.builder(d).sampler(new SequentialSampler(3)).shuffle(true).build());
        assertTrue(e.getMessage().contains("mutually exclusive"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> new TensorDataset(Tensor.zeros(3), Tensor.zeros(4)));
        assertThrows(IllegalArgumentException.class, () -> new Batch(Tensor.zeros(3, 1), Tensor.zeros(2)));
    }

    @Test
    void emptyDatasetYieldsNoBatches() {
        DataLoader<List<Tensor>> loader = DataLoader.of(dataset(0), 4);
        assertEquals(0, loader.size());
        assertFalse(loader.iterator().hasNext());
    }
}
