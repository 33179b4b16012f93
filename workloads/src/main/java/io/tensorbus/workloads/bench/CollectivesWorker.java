package io.tensorbus.workloads.bench;

import io.tensorbus.DType;
import io.tensorbus.Device;
import io.tensorbus.distributed.Distributed;
import io.tensorbus.spi.DeviceRuntimeProvider;
import io.tensorbus.c10d.ReduceOp;
import io.tensorbus.distributed.ProcessGroup;
import io.tensorbus.tensor.Tensor;
import java.util.ArrayList;
import java.util.List;
import java.util.function.ToIntFunction;

/**
 * One rank of {@code tensorbus bench collectives}, started by {@link CollectivesBench} through the launcher:
 * the measurements of {@code tools/anchors/torch_collectives.py}. For each operation and size it runs 3
 * untimed calls, then {@link CollectivesBench#iterations(long)} timed ones, each after an untimed barrier, and
 * rank 0 prints the median as {@code collectives OP bytes=B world=N latency_us=T busbw_GBps=BW}, with the
 * bus bandwidth of nccl-tests ({@link CollectivesBench#busBandwidthFactor}).
 *
 * <p>Before the first measurement every rank calls each operation at every size to be timed, the sizes taking turns
 * ({@code --jit-warmup} rounds, fewer above 256 KiB; the same count on every rank, so the collectives match), and
 * before the timed calls of each measurement it waits until the JIT compilers are idle, so that the measurements time
 * compiled code, as the anchors' precompiled C++ is, rather than the JVM's interpreter or compiler threads that take
 * a rank's core mid-call.
 *
 * <p>Arguments: the suite's options as {@link CollectivesBench.Options#toArgs()} writes them; the world size
 * comes from the launcher's {@code WORLD_SIZE}.
 */
public final class CollectivesWorker {
    /** The largest size warmed up with every one of {@code --jit-warmup} rounds; larger ones get fewer, by bytes. */
    static final long FULL_WARMUP_BYTES = 256L << 10;

    private CollectivesWorker() {
    }

    /** Runs the measurements of this rank (environment as set by {@code tensorbus launch}). */
    public static void main(String[] args) throws Exception {
        CollectivesBench.Options options = CollectivesBench.Options.parse(List.of(args));
        ProcessGroup pg = MultiProcessBench.join(options.backend());
        Device device = placed(options.device(), Distributed.environment().get("LOCAL_RANK"), pg.rank(),
                CollectivesWorker::deviceCount);
        try {
            for (String op : options.ops()) {
                jitWarmup(pg, op, options.jitWarmup(), options.maxBytes(), device);
            }
            for (String op : options.ops()) {
                for (long nbytes : CollectivesBench.SIZES) {
                    if (nbytes <= options.maxBytes()) {
                        Measurement m = measure(pg, op, (int) (nbytes / 4), device, options.jitWarmup() > 0);
                        if (options.namesPlacement()) {
                            m.with("backend", options.backend()).with("device", options.device().toString());
                        }
                        if (options.ranksAsThreads()) {
                            m.with("ranks", "threads");
                        }
                        if (pg.rank() == 0) {
                            MultiProcessBench.report(m);
                        }
                    }
                }
            }
            MultiProcessBench.finish(pg);
        } finally {
            pg.close();
        }
    }

    /**
     * This rank's device: {@code device} itself when it names an index ({@code opencl:0}), else, for a type alone
     * ({@code cuda}), the rank's own device of that type as PyTorch ranks pick theirs: index {@code LOCAL_RANK},
     * else the rank, modulo the number of such devices {@code count} gives, so that ranks share a device when
     * there are fewer devices than ranks (one CPU OpenCL device, say).
     */
    static Device placed(Device device, String localRank, int rank, ToIntFunction<String> count) {
        if (device.isCpu() || device.index() >= 0) {
            return device;
        }
        int wanted = localRank != null ? Integer.parseInt(localRank.trim()) : rank;
        int devices = count.applyAsInt(device.type());
        return new Device(device.type(), devices > 0 ? wanted % devices : wanted);
    }

    /** How many devices of {@code type} this machine has; 0 when their runtime is missing (its error says why). */
    private static int deviceCount(String type) {
        for (DeviceRuntimeProvider p : DeviceRuntimeProvider.all()) {
            if (p.type().equals(type) && p.isAvailable()) {
                return p.runtime().devices().size();
            }
        }
        return 0;
    }

    /**
     * One (operation, size) measurement of the anchor, the tensors on {@code device}: a check, the anchor's 3 untimed
     * calls, then the timed ones; with {@code warm}, the ranks first wait until the JIT compilers are idle
     * ({@link MultiProcessBench#awaitQuietCompiler()}), as the compilations the untimed calls queued would otherwise
     * take a rank's core in the middle of a timed call.
     */
    static Measurement measure(ProcessGroup pg, String op, int n, Device device, boolean warm) {
        int world = pg.size();
        Tensor t = Tensor.ones(device, DType.FLOAT32, n);
        List<Tensor> outs = outputs(pg, device, n);
        long nbytes = 4L * n;
        check(pg, op, t, outs);
        Runnable once = operation(pg, op, t, outs);
        for (int i = 0; i < 3; i++) {
            once.run();
        }
        if (warm) {
            MultiProcessBench.awaitQuietCompiler();
        }
        double seconds = MultiProcessBench.medianSeconds(0, CollectivesBench.iterations(nbytes),
                () -> pg.barrier().await(), once);
        double busbw = nbytes * CollectivesBench.busBandwidthFactor(op, world) / seconds / 1e9;
        return new Measurement("collectives", op).with("bytes", nbytes).with("world", world)
                .with("latency_us", seconds * 1e6, 1).with("busbw_GBps", busbw, 4);
    }

    /** One output tensor of {@code n} floats per rank, for all-gather. */
    private static List<Tensor> outputs(ProcessGroup pg, Device device, int n) {
        List<Tensor> outs = new ArrayList<>(pg.size());
        for (int r = 0; r < pg.size(); r++) {
            outs.add(Tensor.empty(device, DType.FLOAT32, n));
        }
        return outs;
    }

    private static Runnable operation(ProcessGroup pg, String op, Tensor t, List<Tensor> outs) {
        return switch (op) {
            case "allreduce" -> () -> pg.allReduce(t, ReduceOp.SUM).await();
            case "broadcast" -> () -> pg.broadcast(t, 0).await();
            case "allgather" -> () -> pg.allGather(outs, t).await();
            default -> throw new IllegalArgumentException("unknown operation '" + op + "'");
        };
    }

    /**
     * Checks once, before timing, that the operation computes what it should on these tensors, then puts
     * them back to ones: a fast wrong answer would be no measurement.
     */
    private static void check(ProcessGroup pg, String op, Tensor t, List<Tensor> outs) {
        int n = t.numel();
        int world = pg.size();
        switch (op) {
            case "allreduce" -> {
                t.filli(pg.rank() + 1);
                pg.allReduce(t, ReduceOp.SUM).await();
                expect(t, world * (world + 1) / 2.0, op, n);
            }
            case "broadcast" -> {
                t.filli(pg.rank() == 0 ? 7 : -1);
                pg.broadcast(t, 0).await();
                expect(t, 7, op, n);
            }
            case "allgather" -> {
                t.filli(pg.rank() + 1);
                pg.allGather(outs, t).await();
                for (int r = 0; r < world; r++) {
                    expect(outs.get(r), r + 1, op + " slot " + r, n);
                }
            }
            default -> throw new IllegalArgumentException("unknown operation '" + op + "'");
        }
        t.filli(1);
    }

    private static void expect(Tensor t, double value, String what, int n) {
        for (int i : new int[] {0, n / 2, n - 1}) {
            if (t.getDouble(i) != value) {
                throw new IllegalStateException(what + " of " + n + " floats gave " + t.getDouble(i) + " at index " + i
                        + ", expected " + value);
            }
        }
    }

    /**
     * Calls of {@code op} at every size to be timed, each after a barrier, the sizes taking turns: {@code rounds} up to
     * {@link #FULL_WARMUP_BYTES} and fewer above (as many bytes in all as {@code rounds} calls of that size, at least
     * one call). Every size
     * takes paths of its own (a 4-byte tensor the kernels' scalar tails, large ones the shared area's shares and
     * pieces, called hundreds of times a call); taking turns puts every path in the profile each compiler works
     * from, where one size after another had the optimizing compiler build code without the small sizes' paths,
     * which the first timed 4-byte call then threw away.
     */
    private static void jitWarmup(ProcessGroup pg, String op, int rounds, long maxBytes, Device device) {
        List<Runnable> calls = new ArrayList<>();
        List<Integer> counts = new ArrayList<>();
        for (long nbytes : CollectivesBench.SIZES) {
            if (nbytes <= maxBytes && rounds > 0) {
                int n = (int) (nbytes / 4);
                calls.add(operation(pg, op, Tensor.ones(device, DType.FLOAT32, n), outputs(pg, device, n)));
                counts.add((int) Math.max(1, rounds * Math.min(1.0, FULL_WARMUP_BYTES / (double) nbytes)));
            }
        }
        for (int round = 0; round < rounds; round++) {
            for (int k = 0; k < calls.size(); k++) {
                if (round < counts.get(k)) {
                    pg.barrier().await();
                    calls.get(k).run();
                }
            }
        }
    }
}
