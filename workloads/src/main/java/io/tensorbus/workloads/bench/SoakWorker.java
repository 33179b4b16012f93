package io.tensorbus.workloads.bench;

import io.tensorbus.DType;
import io.tensorbus.c10d.ReduceOp;
import io.tensorbus.distributed.Distributed;
import io.tensorbus.distributed.ProcessGroup;
import io.tensorbus.distributed.rpc.RRef;
import io.tensorbus.distributed.rpc.Rpc;
import io.tensorbus.distributed.rpc.RpcAgent;
import io.tensorbus.distributed.rpc.RpcOptions;
import io.tensorbus.distributed.rpc.RpcRegistry;
import io.tensorbus.tensor.HostMemory;
import io.tensorbus.tensor.MemoryScope;
import io.tensorbus.tensor.MemoryStats;
import io.tensorbus.tensor.Tensor;
import io.tensorbus.tensor.Threads;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * One rank of {@code tensorbus bench soak}, started by {@link SoakBench} through the launcher for one part
 * ({@code --parts collectives} or {@code --parts rpc}). Every result is checked exactly; rank 0 prints the memory
 * samples and, at the end, the totals of all ranks (see {@link SoakBench}).
 */
public final class SoakWorker {
    /** The RPC part's add-one. */
    static final String ADD1 = "soak.add1";
    /** Where each RPC worker sends worker0 its totals once its calls are done. */
    static final String REPORT = "soak.report";
    /** The largest tensor the RPC part echoes, in elements (64 KiB of float32). */
    static final int MAX_ECHO = 16_384;

    private SoakWorker() {
    }

    /** Runs this rank's part (environment as set by {@code tensorbus launch}). */
    public static void main(String[] args) throws Exception {
        SoakBench.Options options = SoakBench.Options.parse(List.of(args));
        if (options.parts().equals(List.of("collectives"))) {
            collectives(options);
        } else if (options.parts().equals(List.of("rpc"))) {
            rpc(options);
            // The RPC agent's threads must not keep a finished worker alive.
            System.exit(0);
        } else {
            throw new IllegalArgumentException("a soak worker runs one part, got " + options.parts());
        }
    }

    // ---- collectives ---------------------------------------------------------------------------------

    private static void collectives(SoakBench.Options options) {
        ProcessGroup pg = MultiProcessBench.join();
        try {
            Totals totals = new Totals(options.warmupOf(options.iterations()), options.iterations());
            SplittableRandom sizes = new SplittableRandom(2026);
            long start = System.nanoTime();
            for (int i = 0; i < options.iterations(); i++) {
                int n = elements(sizes, options.maxBytes() / 4);
                try (MemoryScope scope = options.memoryScope() ? MemoryScope.open() : null) {
                    totals.wrong += oneCollective(pg, i, n, totals);
                }
                sample(pg.rank() == 0, "collectives", i + 1, options.sampleEvery(), totals);
            }
            double seconds = (System.nanoTime() - start) / 1e9;
            Tensor sums = Tensor.of(new double[] {totals.wrong, totals.checked}, 2);
            pg.allReduce(sums, ReduceOp.SUM).await();
            Tensor maxima = totals.memory();
            pg.allReduce(maxima, ReduceOp.MAX).await();
            if (pg.rank() == 0) {
                MultiProcessBench.report(totals.summary("collectives", options.iterations(), pg.size(),
                        (long) sums.getDouble(0), (long) sums.getDouble(1), maxima, seconds));
            }
            MultiProcessBench.finish(pg);
        } finally {
            pg.close();
        }
    }

    /** A size from 1 to {@code max} elements, spread evenly over the powers of two. */
    static int elements(SplittableRandom random, long max) {
        int bits = 63 - Long.numberOfLeadingZeros(max);
        long base = 1L << random.nextInt(bits + 1);
        return (int) Math.min(max, base + random.nextLong(base));
    }

    /**
     * Collective {@code i} on {@code n} fresh elements: an all-reduce, a broadcast or an all-gather in turn, with
     * values that make every element's expected result an exact small number; returns the wrong elements.
     */
    static long oneCollective(ProcessGroup pg, int i, int n, Totals totals) {
        int world = pg.size();
        int rank = pg.rank();
        switch (i % 3) {
            case 0 -> {
                Tensor t = Tensor.full(rank + 1 + i % 5, DType.FLOAT32, n);
                pg.allReduce(t, ReduceOp.SUM).await();
                totals.checked += n;
                return wrong(t, world * (world + 1) / 2 + world * (i % 5), n);
            }
            case 1 -> {
                int root = i % world;
                Tensor t = Tensor.full(rank == root ? 1000 + i % 1000 : -1, DType.FLOAT32, n);
                pg.broadcast(t, root).await();
                totals.checked += n;
                return wrong(t, 1000 + i % 1000, n);
            }
            default -> {
                Tensor t = Tensor.full(rank * 10 + i % 10, DType.FLOAT32, n);
                List<Tensor> outs = new ArrayList<>(world);
                for (int r = 0; r < world; r++) {
                    outs.add(Tensor.empty(DType.FLOAT32, n));
                }
                pg.allGather(outs, t).await();
                long wrong = 0;
                for (int r = 0; r < world; r++) {
                    wrong += wrong(outs.get(r), r * 10 + i % 10, n);
                }
                totals.checked += (long) n * world;
                return wrong;
            }
        }
    }

    /** 0 when every element of {@code t} is {@code expected} (its least and greatest are), else all {@code n}. */
    static long wrong(Tensor t, double expected, int n) {
        return t.numel() == n && t.min().item() == expected && t.max().item() == expected ? 0 : n;
    }

    // ---- rpc -------------------------------------------------------------------------------------------

    private static void rpc(SoakBench.Options options) throws Exception {
        Threads.set(1);
        int rank = Integer.parseInt(Distributed.environment().get("RANK"));
        int world = Integer.parseInt(Distributed.environment().get("WORLD_SIZE"));
        Map<Integer, Tensor> reports = new ConcurrentHashMap<>();
        RpcRegistry registry = new RpcRegistry()
                .register(ADD1, a -> ((Number) a.get(0)).longValue() + 1)
                .register(REPORT, a -> reports.put(((Number) a.get(0)).intValue(), (Tensor) a.get(1)) == null);
        RpcAgent agent = Rpc.init("worker" + rank, rank, world, RpcOptions.builder().registry(registry)
                .timeout(MultiProcessBench.OPERATION_TIMEOUT).build()).await(2, TimeUnit.MINUTES);
        try {
            String next = "worker" + (rank + 1) % world;
            Totals totals = new Totals(options.warmupOf(options.rpcCalls()), options.rpcCalls());
            long start = System.nanoTime();
            for (int k = 0; k < options.rpcCalls(); k++) {
                try (MemoryScope scope = options.memoryScope() ? MemoryScope.open() : null) {
                    totals.wrong += oneCall(agent, next, k);
                }
                totals.checked++;
                sample(rank == 0, "rpc", k + 1, options.sampleEvery(), totals);
            }
            double seconds = (System.nanoTime() - start) / 1e9;
            Tensor mine = Tensor.of(new double[] {totals.wrong, totals.checked}, 2);
            agent.rpcSync("worker0", REPORT, rank, Tensor.cat(List.of(mine, totals.memory()), 0));
            if (rank == 0) {
                reportRpc(options, world, reports, totals, seconds);
            }
        } finally {
            agent.shutdown();
        }
    }

    /**
     * Call {@code k} to {@code to}: an add-one, a tensor echo or a remote reference in turn; 1 when its answer was
     * wrong.
     */
    static long oneCall(RpcAgent agent, String to, int k) {
        switch (k % 4) {
            case 0, 1 -> {
                long r = agent.<Long>rpcSync(to, ADD1, k);
                return r == k + 1 ? 0 : 1;
            }
            case 2 -> {
                int n = 1 + (int) ((k * 7919L) % MAX_ECHO);
                Tensor t = Tensor.full(k % 1000, DType.FLOAT32, n);
                Tensor back = agent.rpcSync(to, "builtin.echo", t);
                return wrong(back, k % 1000, n) == 0 ? 0 : 1;
            }
            default -> {
                RRef<Long> ref = agent.remote(to, ADD1, k);
                try {
                    return ref.toHere() == k + 1 ? 0 : 1;
                } finally {
                    ref.close();
                }
            }
        }
    }

    /** Waits for every worker's totals and prints the part's line. */
    private static void reportRpc(SoakBench.Options options, int world, Map<Integer, Tensor> reports, Totals totals,
                                  double seconds) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(10);
        while (reports.size() < world) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("only workers " + reports.keySet() + " of " + world
                        + " reported their totals within 10 minutes");
            }
            Thread.sleep(10);
        }
        long wrong = 0;
        long checked = 0;
        double[] maxima = new double[Totals.MEMORY_FIELDS];
        for (Tensor r : reports.values()) {
            wrong += (long) r.getDouble(0);
            checked += (long) r.getDouble(1);
            for (int f = 0; f < maxima.length; f++) {
                maxima[f] = Math.max(maxima[f], r.getDouble(2 + f));
            }
        }
        MultiProcessBench.report(totals.summary("rpc", options.rpcCalls(), world, wrong, checked,
                Tensor.of(maxima, maxima.length), seconds));
    }

    // ---- memory ----------------------------------------------------------------------------------------

    /** After iteration (or call) {@code done}: samples memory, and on {@code print} every sample's line. */
    private static void sample(boolean print, String part, int done, int sampleEvery, Totals totals) {
        boolean printed = print && done % sampleEvery == 0;
        if (!printed && !totals.probes(done)) {
            return;
        }
        long rss = residentBytes();
        totals.observe(done, rss);
        if (printed) {
            Runtime rt = Runtime.getRuntime();
            MemoryStats host = HostMemory.stats();
            MultiProcessBench.report(new Measurement("soak", part + "-sample").with("done", done)
                    .with("rss_mib", mib(rss), 1).with("heap_used_mib", mib(rt.totalMemory() - rt.freeMemory()), 1)
                    .with("heap_committed_mib", mib(rt.totalMemory()), 1)
                    .with("tensor_live_mib", mib(host.allocatedBytes()), 1)
                    .with("tensor_cached_mib", mib(host.cachedBytes()), 1));
        }
    }

    static double mib(long bytes) {
        return bytes / (1024.0 * 1024.0);
    }

    /** This process's resident memory in bytes, from {@code /proc/self/status}; 0 where there is none. */
    static long residentBytes() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith("VmRSS:")) {
                    return Long.parseLong(line.replaceAll("\\D+", "")) * 1024;
                }
            }
        } catch (IOException | NumberFormatException e) {
            return 0;
        }
        return 0;
    }

    /**
     * What one rank counted: wrong results, checked elements (or calls), and its resident memory over time. Growth
     * compares the highest resident memory of two windows, each a tenth of the run, probed 20 times: the one right
     * after the warm-up and the last. One sample each would measure where the JVM's periodic trim of the C
     * library's heap happened to leave the footprint (it swings by 10-20 MiB within a second), not its trend.
     */
    static final class Totals {
        static final int MEMORY_FIELDS = 4;
        final int warmup;
        /** The iterations (or calls) of the whole run. */
        final int total;
        private final int window;
        private final int probeEvery;
        long wrong;
        long checked;
        long rssWarm;
        long rssEnd;
        long rssPeak;

        Totals(int warmup, int total) {
            this.warmup = warmup;
            this.total = total;
            this.window = Math.max(1, total / 10);
            this.probeEvery = Math.max(1, window / 20);
        }

        /** Whether iteration {@code done} is one whose resident memory a window of growth needs. */
        boolean probes(int done) {
            return done % probeEvery == 0 && (afterWarmup(done) || last(done)) || done == warmup || done == total;
        }

        private boolean afterWarmup(int done) {
            return done >= warmup && done <= warmup + window;
        }

        private boolean last(int done) {
            return done > total - window;
        }

        void observe(int done, long rss) {
            if (afterWarmup(done) || rssWarm == 0) {
                rssWarm = Math.max(rssWarm, rss);
            }
            if (last(done)) {
                rssEnd = Math.max(rssEnd, rss);
            }
            rssPeak = Math.max(rssPeak, rss);
        }

        /** The growth of the highest resident memory from the window after the warm-up to the last, in percent. */
        double growthPct() {
            return rssWarm == 0 ? 0 : 100.0 * (rssEnd - rssWarm) / rssWarm;
        }

        /** {@code [growth %, warm MiB, end MiB, peak MiB]}, for a maximum over ranks. */
        Tensor memory() {
            return Tensor.of(new double[] {growthPct(), mib(rssWarm), mib(rssEnd), mib(rssPeak)},
                    MEMORY_FIELDS);
        }

        Measurement summary(String part, int count, int world, long wrong, long checked, Tensor maxima,
                            double seconds) {
            return new Measurement("soak", part).with(part.equals("rpc") ? "calls" : "iterations", count)
                    .with("world", world).with("wrong", wrong).with("checked", checked)
                    .with("growth_pct", maxima.getDouble(0), 1).with("rss_warm_mib", maxima.getDouble(1), 1)
                    .with("rss_end_mib", maxima.getDouble(2), 1).with("rss_peak_mib", maxima.getDouble(3), 1)
                    .with("seconds", seconds, 1);
        }
    }
}
