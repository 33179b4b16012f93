package io.tensorbus.it;

import io.tensorbus.DType;
import io.tensorbus.c10d.ReduceOp;
import io.tensorbus.distributed.Distributed;
import io.tensorbus.distributed.GroupRank;
import io.tensorbus.distributed.InitOptions;
import io.tensorbus.distributed.P2POp;
import io.tensorbus.distributed.ProcessGroup;
import io.tensorbus.tensor.Tensor;
import io.vertx.core.Future;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.IntToDoubleFunction;
import java.util.function.IntToLongFunction;

import static io.tensorbus.it.Vals.integral;
import static io.tensorbus.it.Vals.real;

/**
 * One rank of a multi-JVM check of every {@link ProcessGroup} operation, started by {@code tensorbus launch}
 * (or any launcher that sets {@code env://}'s variables). Runs each operation with values whose results are
 * known exactly, over sizes from 0 elements to a 64 MiB float32 allReduce, and prints {@code CHECK OK <n> ops}
 * and exits 0, or prints {@code CHECK FAILED <step>: <error>} (stack trace on stderr) and exits 1.
 *
 * <p>The group timeout in seconds is the first argument, else {@code TENSORBUS_CHECK_TIMEOUT_S}, else 120; the
 * arguments after it are backend settings as {@code key=value} ({@code tcp.sharedMemory=false}).
 */
public final class CollectivesCheck {
    /** Element counts: empty, one, fewer than the ranks, not a multiple of them, and above 64 KiB. */
    private static final int[] SIZES = {0, 1, 2, 7, 4099, 70_001};
    /** 64 MiB of float32. */
    static final int BIG = 16 * 1024 * 1024;

    private final ProcessGroup pg;
    private final int rank;
    private final int world;
    private final Duration wait;
    private int ops;
    private String step = "init";

    private CollectivesCheck(ProcessGroup pg) {
        this.pg = pg;
        this.rank = pg.rank();
        this.world = pg.size();
        this.wait = pg.timeout().plusSeconds(10);
    }

    public static void main(String[] args) {
        Duration timeout = Duration.ofSeconds(args.length > 0 ? Integer.parseInt(args[0])
                : Vals.envInt("TENSORBUS_CHECK_TIMEOUT_S", 120));
        ProcessGroup pg = null;
        CollectivesCheck check = null;
        int code;
        try {
            InitOptions.Builder init = InitOptions.builder().timeout(timeout);
            for (int i = 1; i < args.length; i++) {
                String[] kv = args[i].split("=", 2);
                init.property(kv[0], kv[1]);
            }
            pg = Vals.await(Distributed.initProcessGroup(init.build()), timeout.plusSeconds(10), "initProcessGroup");
            check = new CollectivesCheck(pg);
            check.runAll();
            System.out.println("CHECK OK " + check.ops + " ops (rank " + pg.rank() + " of " + pg.size() + ")");
            code = 0;
        } catch (Throwable e) {
            System.out.println("CHECK FAILED " + (check == null ? "init" : check.step) + ": " + e);
            e.printStackTrace();
            code = 1;
        } finally {
            if (pg != null) {
                try {
                    Vals.await(pg.destroy(), Duration.ofSeconds(10), "destroy");
                } catch (RuntimeException e) {
                    System.err.println("destroy failed: " + e);
                }
            }
        }
        System.out.flush();
        // Exits only on failure: as a rank thread of one JVM (--ranks-as-threads), an exit would end them all.
        if (code != 0) {
            System.exit(code);
        }
    }

    private void runAll() {
        allReduce();
        broadcast();
        reduce();
        allGather();
        gatherAndScatter();
        reduceScatter();
        allToAll();
        barrier();
        pointToPoint();
        subgroups();
        objects();
        c10dParity();
        bigAllReduce();
        step = "final barrier";
        run("barrier", pg.barrier());
    }

    // ---- running and checking ---------------------------------------------------------------------------

    private <T> T run(String what, Future<T> f) {
        step = what;
        T result = Vals.await(f, wait, what);
        ops++;
        return result;
    }

    private void awaitAll(String what, List<? extends Future<?>> fs) {
        step = what;
        for (Future<?> f : fs) {
            Vals.await(f, wait, what);
            ops++;
        }
    }

    private void expect(boolean ok, String message) {
        if (!ok) {
            throw new AssertionError(step + ": " + message);
        }
    }

    private void expectReal(Tensor t, int n, IntToDoubleFunction expected, double tolerance, String what) {
        expect(t.numel() == n, what + " has " + t.numel() + " elements, expected " + n);
        for (int i = 0; i < n; i++) {
            double e = expected.applyAsDouble(i);
            double a = real(t, i);
            if (Math.abs(e - a) > tolerance * Math.max(1, Math.abs(e))) {
                expect(false, what + "[" + i + "] = " + a + ", expected " + e);
            }
        }
    }

    private void expectIntegral(Tensor t, int n, IntToLongFunction expected, String what) {
        expect(t.numel() == n, what + " has " + t.numel() + " elements, expected " + n);
        for (int i = 0; i < n; i++) {
            long e = expected.applyAsLong(i);
            long a = integral(t, i);
            if (e != a) {
                expect(false, what + "[" + i + "] = " + a + ", expected " + e);
            }
        }
    }

    // ---- values -----------------------------------------------------------------------------------------

    /** Small integers in [-4, 6] (sums and products of three stay exact in float32). */
    private static double fval(int r, int i) {
        return ((i * 7L + r * 3L) % 11) - 4;
    }

    /** int64 values that use all 64 bits (sign, high and low bits). */
    private static long lval(int r, int i) {
        long v = ((long) (i % 13) - 6) * 1_000_000_007L ^ (1L << ((r * 5 + i) % 63));
        return r == 1 ? v ^ Long.MIN_VALUE : v;
    }

    /** Distinct exactly-representable float32 values per (rank or id, index). */
    private static double gval(int id, int i) {
        return id * 100_000.0 + (i % 99_991);
    }

    private static double foldReal(ReduceOp op, double[] xs, int world) {
        double acc = xs[0];
        for (int k = 1; k < xs.length; k++) {
            double x = xs[k];
            acc = switch (op.type()) {
                case SUM, AVG -> acc + x;
                case PRODUCT -> acc * x;
                case MAX -> Math.max(acc, x);
                case MIN -> Math.min(acc, x);
                default -> throw new IllegalArgumentException(op.toString());
            };
        }
        return op == ReduceOp.AVG ? acc / world : acc;
    }

    private static long foldLong(ReduceOp op, long[] xs) {
        long acc = xs[0];
        for (int k = 1; k < xs.length; k++) {
            long x = xs[k];
            acc = switch (op.type()) {
                case SUM -> acc + x;
                case PRODUCT -> acc * x;
                case MAX -> Math.max(acc, x);
                case MIN -> Math.min(acc, x);
                case BAND -> acc & x;
                case BOR -> acc | x;
                case BXOR -> acc ^ x;
                default -> throw new IllegalArgumentException(op.toString());
            };
        }
        return acc;
    }

    private double[] realsAt(IntToDoubleFunction perRank) {
        double[] xs = new double[world];
        for (int r = 0; r < world; r++) {
            xs[r] = perRank.applyAsDouble(r);
        }
        return xs;
    }

    private long[] longsAt(IntToLongFunction perRank) {
        long[] xs = new long[world];
        for (int r = 0; r < world; r++) {
            xs[r] = perRank.applyAsLong(r);
        }
        return xs;
    }

    // ---- the operations ---------------------------------------------------------------------------------

    private void allReduce() {
        for (DType dt : List.of(DType.FLOAT32, DType.FLOAT64)) {
            for (ReduceOp op : List.of(ReduceOp.SUM, ReduceOp.PRODUCT, ReduceOp.MAX, ReduceOp.MIN, ReduceOp.AVG)) {
                for (int n : dt == DType.FLOAT32 ? SIZES : new int[] {3, 70_001}) {
                    Tensor t = real(dt, n, i -> fval(rank, i));
                    String what = "allReduce " + dt + " " + op + " n=" + n;
                    run(what, pg.allReduce(t, op));
                    double tol = op == ReduceOp.AVG ? 1e-6 : 0;
                    expectReal(t, n, i -> {
                        double e = foldReal(op, realsAt(r -> fval(r, i)), world);
                        return dt == DType.FLOAT32 ? (float) e : e;
                    }, tol, what);
                }
            }
        }
        for (DType dt : List.of(DType.INT64, DType.INT32)) {
            for (ReduceOp op : List.of(ReduceOp.SUM, ReduceOp.PRODUCT, ReduceOp.MAX, ReduceOp.MIN, ReduceOp.BAND,
                    ReduceOp.BOR, ReduceOp.BXOR)) {
                for (int n : dt == DType.INT64 ? SIZES : new int[] {5, 33_333}) {
                    Tensor t = integral(dt, n, i -> lval(rank, i));
                    String what = "allReduce " + dt + " " + op + " n=" + n;
                    run(what, pg.allReduce(t, op));
                    expectIntegral(t, n, i -> {
                        if (dt == DType.INT64) {
                            return foldLong(op, longsAt(r -> lval(r, i)));
                        }
                        long[] xs = longsAt(r -> (int) lval(r, i));
                        int acc = xs.length == 0 ? 0 : (int) xs[0];
                        for (int k = 1; k < xs.length; k++) {
                            int x = (int) xs[k];
                            acc = switch (op.type()) {
                                case SUM -> acc + x;
                                case PRODUCT -> acc * x;
                                case MAX -> Math.max(acc, x);
                                case MIN -> Math.min(acc, x);
                                case BAND -> acc & x;
                                case BOR -> acc | x;
                                case BXOR -> acc ^ x;
                                default -> throw new IllegalArgumentException(op.toString());
                            };
                        }
                        return acc;
                    }, what);
                }
            }
        }
        for (ReduceOp op : List.of(ReduceOp.BAND, ReduceOp.BOR, ReduceOp.MAX)) {
            int n = 100;
            Tensor t = integral(DType.BOOL, n, i -> (i + rank) % 3 == 0 ? 1 : i % 4 == 0 ? 1 : 0);
            String what = "allReduce bool " + op;
            run(what, pg.allReduce(t, op));
            expectIntegral(t, n, i -> {
                long[] xs = longsAt(r -> (i + r) % 3 == 0 ? 1 : i % 4 == 0 ? 1 : 0);
                return foldLong(op, xs);
            }, what);
        }
    }

    private void broadcast() {
        for (int root = 0; root < world; root++) {
            int src = root;
            for (int n : new int[] {0, 5, 300_001}) {
                Tensor t = rank == src ? real(DType.FLOAT32, n, i -> gval(src, i)) : real(DType.FLOAT32, n, i -> -1);
                String what = "broadcast float32 from " + src + " n=" + n;
                run(what, pg.broadcast(t, src));
                expectReal(t, n, i -> gval(src, i), 0, what);
            }
            Tensor l = rank == src ? integral(DType.INT64, 9, i -> lval(src, i)) : integral(DType.INT64, 9, i -> 0);
            run("broadcast int64 from " + src, pg.broadcast(l, src));
            expectIntegral(l, 9, i -> lval(src, i), "broadcast int64 from " + src);
        }
    }

    private void reduce() {
        for (int root = 0; root < world; root++) {
            for (ReduceOp op : List.of(ReduceOp.SUM, ReduceOp.MAX)) {
                for (int n : new int[] {0, 3, 70_001}) {
                    Tensor t = real(DType.FLOAT32, n, i -> fval(rank, i));
                    String what = "reduce " + op + " to " + root + " n=" + n;
                    run(what, pg.reduce(t, root, op));
                    if (rank == root) {
                        expectReal(t, n, i -> foldReal(op, realsAt(r -> fval(r, i)), world), 0, what);
                    }
                }
            }
        }
    }

    private List<Tensor> filledList(int count, int n) {
        List<Tensor> out = new ArrayList<>();
        for (int k = 0; k < count; k++) {
            out.add(real(DType.FLOAT32, n, i -> -7));
        }
        return out;
    }

    private void allGather() {
        for (int n : new int[] {0, 1, 3, 50_001}) {
            Tensor in = real(DType.FLOAT32, n, i -> gval(rank, i));
            List<Tensor> outs = filledList(world, n);
            String what = "allGather n=" + n;
            run(what, pg.allGather(outs, in));
            for (int r = 0; r < world; r++) {
                int from = r;
                expectReal(outs.get(r), n, i -> gval(from, i), 0, what + " output " + r);
            }
            Tensor out = real(DType.FLOAT32, n * world, i -> -7);
            what = "allGatherIntoTensor n=" + n;
            run(what, pg.allGatherIntoTensor(out, in));
            expectReal(out, n * world, i -> gval(i / Math.max(1, n), i % Math.max(1, n)), 0, what);
        }
    }

    private void gatherAndScatter() {
        for (int root = 0; root < world; root++) {
            int dst = root;
            for (int n : new int[] {0, 4, 40_000}) {
                Tensor in = real(DType.FLOAT32, n, i -> gval(rank, i));
                List<Tensor> outs = rank == dst ? filledList(world, n) : List.of();
                String what = "gather to " + dst + " n=" + n;
                run(what, pg.gather(in, outs, dst));
                if (rank == dst) {
                    for (int r = 0; r < world; r++) {
                        int from = r;
                        expectReal(outs.get(r), n, i -> gval(from, i), 0, what + " output " + r);
                    }
                }
                List<Tensor> ins = new ArrayList<>();
                if (rank == dst) {
                    for (int r = 0; r < world; r++) {
                        int id = dst * 10 + r;
                        ins.add(real(DType.FLOAT32, n, i -> gval(id, i)));
                    }
                }
                Tensor out = real(DType.FLOAT32, n, i -> -7);
                what = "scatter from " + dst + " n=" + n;
                run(what, pg.scatter(out, ins, dst));
                expectReal(out, n, i -> gval(dst * 10 + rank, i), 0, what);
            }
        }
    }

    private static double rsval(int r, int d, int i) {
        return (r + 1) * (d + 2) + (i % 17) - 8;
    }

    private void reduceScatter() {
        for (ReduceOp op : List.of(ReduceOp.SUM, ReduceOp.MAX, ReduceOp.MIN)) {
            for (int n : new int[] {0, 1, 6, 30_001}) {
                List<Tensor> ins = new ArrayList<>();
                for (int d = 0; d < world; d++) {
                    int dd = d;
                    ins.add(real(DType.FLOAT32, n, i -> rsval(rank, dd, i)));
                }
                Tensor out = real(DType.FLOAT32, n, i -> -100);
                String what = "reduceScatter " + op + " n=" + n;
                run(what, pg.reduceScatter(out, ins, op));
                expectReal(out, n, i -> foldReal(op, realsAt(r -> rsval(r, rank, i)), world), 0, what);
            }
        }
    }

    /** Uneven all-to-all sizes; some pairs send nothing. */
    private static int splitSize(int src, int dst, int scale) {
        return ((src + 2 * dst) % 4) * scale + src * 7;
    }

    private static long a2aVal(int src, int dst, int i) {
        return src * 1_000_000_000L + dst * 1_000_000L + i;
    }

    private void allToAll() {
        for (int scale : new int[] {3, 1000, 60_000}) {
            List<Tensor> ins = new ArrayList<>();
            List<Tensor> outs = new ArrayList<>();
            for (int p = 0; p < world; p++) {
                int peer = p;
                ins.add(integral(DType.INT64, splitSize(rank, peer, scale), i -> a2aVal(rank, peer, i)));
                outs.add(integral(DType.INT64, splitSize(peer, rank, scale), i -> -1));
            }
            String what = "allToAll uneven scale=" + scale;
            run(what, pg.allToAll(outs, ins));
            for (int p = 0; p < world; p++) {
                int src = p;
                expectIntegral(outs.get(p), splitSize(src, rank, scale), i -> a2aVal(src, rank, i),
                        what + " from " + src);
            }
        }
    }

    private void barrier() {
        for (int k = 0; k < 3; k++) {
            run("barrier " + k, pg.barrier());
        }
        run("monitoredBarrier", pg.monitoredBarrier(Duration.ofSeconds(30), true));
        run("monitoredBarrier again", pg.monitoredBarrier(Duration.ofSeconds(30), false));
    }

    private void pointToPoint() {
        int next = (rank + 1) % world;
        int prev = (rank - 1 + world) % world;
        // Two tags to the same peer, received in the opposite order: matched by tag, not by arrival.
        Tensor small = real(DType.FLOAT32, 5, i -> rank * 10 + i);
        Tensor large = real(DType.FLOAT32, 100_000, i -> gval(rank, i));
        Tensor gotSmall = real(DType.FLOAT32, 5, i -> -1);
        Tensor gotLarge = real(DType.FLOAT32, 100_000, i -> -1);
        Future<Integer> rLarge = pg.irecv(gotLarge, prev, 9);
        Future<Integer> rSmall = pg.irecv(gotSmall, prev, 5);
        Future<Void> s5 = pg.isend(small, next, 5);
        Future<Void> s9 = pg.isend(large, next, 9);
        awaitAll("isend/irecv ring with tags 5 and 9", List.of(s5, s9));
        expect(run("irecv tag 9", rLarge) == prev, "irecv tag 9 came from " + rLarge.result() + ", expected " + prev);
        expect(run("irecv tag 5", rSmall) == prev, "irecv tag 5 came from " + rSmall.result() + ", expected " + prev);
        expectReal(gotSmall, 5, i -> prev * 10 + i, 0, "ring tag 5");
        expectReal(gotLarge, 100_000, i -> gval(prev, i), 0, "ring tag 9");

        // Same peer, same tag: in order.
        if (rank == 0) {
            List<Future<Void>> sends = new ArrayList<>();
            for (int k = 1; k <= 3; k++) {
                sends.add(pg.isend(Tensor.full(k, DType.INT64, 4), 1, 1));
            }
            awaitAll("three isends with tag 1", sends);
        } else if (rank == 1) {
            List<Tensor> got = new ArrayList<>();
            List<Future<Integer>> recvs = new ArrayList<>();
            for (int k = 1; k <= 3; k++) {
                Tensor t = Tensor.zeros(DType.INT64, 4);
                got.add(t);
                recvs.add(pg.irecv(t, 0, 1));
            }
            awaitAll("three irecvs with tag 1", recvs);
            for (int k = 1; k <= 3; k++) {
                int kk = k;
                expectIntegral(got.get(k - 1), 4, i -> kk, "message " + k + " of tag 1 (in order)");
            }
        }

        // Any source: rank 0 takes one message from each other rank, in whatever order they arrive.
        if (rank == 0) {
            Set<Integer> senders = new HashSet<>();
            for (int k = 1; k < world; k++) {
                Tensor t = Tensor.zeros(DType.INT64, 3);
                int from = run("irecv ANY_SOURCE tag 3", pg.irecv(t, ProcessGroup.ANY_SOURCE, 3));
                expectIntegral(t, 3, i -> from * 100L + i, "any-source message from " + from);
                senders.add(from);
            }
            Set<Integer> expected = new HashSet<>();
            for (int r = 1; r < world; r++) {
                expected.add(r);
            }
            expect(senders.equals(expected), "any-source senders " + senders + ", expected " + expected);
            Tensor empty = Tensor.empty(DType.FLOAT32, 0);
            expect(run("irecv 0 elements", pg.irecv(empty, 1, 4)) == 1, "empty message from the wrong rank");
        } else {
            run("isend to rank 0 tag 3", pg.isend(integral(DType.INT64, 3, i -> rank * 100L + i), 0, 3));
            if (rank == 1) {
                run("isend 0 elements", pg.isend(Tensor.empty(DType.FLOAT32, 0), 0, 4));
            }
        }

        // The tutorial's blocking send / recv.
        if (rank == 0) {
            Tensor t = Tensor.full(42, DType.FLOAT32, 1);
            step = "blocking send";
            pg.send(t, 1);
            ops++;
        } else if (rank == 1) {
            Tensor t = Tensor.zeros(1);
            step = "blocking recv";
            expect(pg.recv(t, 0) == 0, "blocking recv from the wrong rank");
            ops++;
            expectReal(t, 1, i -> 42, 0, "blocking recv");
        }
        run("barrier after point-to-point", pg.barrier());
    }

    /** The calls of PyTorch 2.x's c10d added for issue 19, each with values whose results are known exactly. */
    private void c10dParity() {
        int next = (rank + 1) % world;
        int prev = (rank + world - 1) % world;
        Tensor in = real(DType.FLOAT32, 3 * world, i -> fval(rank, i));
        Tensor out = real(DType.FLOAT32, 3, i -> 0);
        run("reduceScatterTensor", pg.reduceScatterTensor(out, in));
        expectReal(out, 3, i -> sumOver(r -> fval(r, 3 * rank + i)), 0, "reduceScatterTensor");

        // Rank r sends (r + d) % 3 rows of 2 to rank d; every value names its sender, receiver and place.
        int[] inSplits = new int[world];
        int[] outSplits = new int[world];
        for (int p = 0; p < world; p++) {
            inSplits[p] = (rank + p) % 3;
            outSplits[p] = (p + rank) % 3;
        }
        int inRows = Arrays.stream(inSplits).sum();
        int outRows = Arrays.stream(outSplits).sum();
        float[] sent = new float[2 * inRows];
        for (int d = 0, at = 0; d < world; d++) {
            for (int k = 0; k < 2 * inSplits[d]; k++, at++) {
                sent[at] = 1000 * rank + 100 * d + k;
            }
        }
        Tensor received = Tensor.zeros(DType.FLOAT32, outRows, 2);
        run("allToAllSingle uneven", pg.allToAllSingle(received, Tensor.of(sent, inRows, 2), outSplits, inSplits));
        float[] got = received.toFloatArray();
        for (int s = 0, at = 0; s < world; s++) {
            for (int k = 0; k < 2 * outSplits[s]; k++, at++) {
                expect(got[at] == 1000 * s + 100 * rank + k, "allToAllSingle from rank " + s + "[" + k + "] = "
                        + got[at]);
            }
        }

        List<Object> gathered = run("gatherObject", pg.gatherObject(List.of("r", rank), world - 1));
        expect(rank == world - 1 ? gathered.size() == world && gathered.get(1).equals(List.of("r", 1))
                : gathered.isEmpty(), "gatherObject " + gathered);
        List<Object> scattered = new ArrayList<>(Arrays.asList((Object) null));
        List<Object> inputs = new ArrayList<>();
        for (int r = 0; r < world; r++) {
            inputs.add("for " + r);
        }
        run("scatterObjectList", pg.scatterObjectList(scattered, rank == 0 ? inputs : null, 0));
        expect(scattered.getFirst().equals("for " + rank), "scatterObjectList " + scattered);
        Future<Void> sentList = pg.sendObjectList(new ArrayList<>(List.of(rank, "to " + next)), next);
        List<Object> list = new ArrayList<>(Arrays.asList(null, null));
        int from = run("recvObjectList", pg.recvObjectList(list, prev));
        run("sendObjectList", sentList);
        expect(from == prev && list.equals(List.of(prev, "to " + rank)), "recvObjectList " + list + " from " + from);

        Tensor toNext = real(DType.FLOAT32, 4, i -> gval(rank, i));
        Tensor fromPrev = real(DType.FLOAT32, 4, i -> 0);
        awaitAll("batchIsendIrecv ring", pg.batchIsendIrecv(List.of(P2POp.isend(toNext, next),
                P2POp.irecv(fromPrev, prev))));
        expectReal(fromPrev, 4, i -> gval(prev, i), 0, "batchIsendIrecv");

        Tensor a = real(DType.FLOAT32, 5, i -> fval(rank, i));
        Tensor b = real(DType.FLOAT32, 2, i -> fval(rank, i + 5));
        run("allReduceCoalesced", pg.allReduceCoalesced(List.of(a, b), ReduceOp.SUM));
        expectReal(a, 5, i -> sumOver(r -> fval(r, i)), 0, "allReduceCoalesced[0]");
        expectReal(b, 2, i -> sumOver(r -> fval(r, i + 5)), 0, "allReduceCoalesced[1]");

        Tensor halves = real(DType.FLOAT32, 3, i -> rank + i);
        run("allReduce PREMUL_SUM", pg.allReduce(halves, ReduceOp.premulSum(0.5)));
        expectReal(halves, 3, i -> sumOver(r -> r + i) * 0.5, 0, "allReduce PREMUL_SUM");
        run("barrier after the c10d calls", pg.barrier());
    }

    private double sumOver(IntToDoubleFunction perRank) {
        double sum = 0;
        for (int r = 0; r < world; r++) {
            sum += perRank.applyAsDouble(r);
        }
        return sum;
    }

    private void subgroups() {
        // Without rank 1 when there are three or more ranks; ranks given out of order.
        int[] members = world > 2 ? new int[] {world - 1, 0} : new int[] {1, 0};
        ProcessGroup sub = run("newGroup " + Arrays.toString(members), Distributed.newGroup(pg, members));
        int[] sorted = members.clone();
        Arrays.sort(sorted);
        boolean member = Arrays.binarySearch(sorted, rank) >= 0;
        expect(sub.isMember() == member, "isMember() is " + sub.isMember() + " on rank " + rank);
        expect(Arrays.equals(sub.ranks(), sorted), "subgroup ranks " + Arrays.toString(sub.ranks()));
        if (member) {
            expect(sub.rank() == Arrays.binarySearch(sorted, rank), "subgroup rank " + sub.rank());
            Tensor t = real(DType.FLOAT32, 1000, i -> rank + 1 + i);
            run("subgroup allReduce", sub.allReduce(t));
            double base = Arrays.stream(sorted).mapToDouble(g -> g + 1).sum();
            expectReal(t, 1000, i -> base + (double) sorted.length * i, 0, "subgroup allReduce");
            Tensor b = sub.rank() == 1 ? real(DType.FLOAT32, 77, i -> gval(9, i)) : real(DType.FLOAT32, 77, i -> 0);
            run("subgroup broadcast from its rank 1", sub.broadcast(b, GroupRank.of(1)));
            expectReal(b, 77, i -> gval(9, i), 0, "subgroup broadcast");
            // src is a global rank, as in torch.distributed: the subgroup's first member by its global number.
            Tensor byGlobal = rank == sorted[0] ? real(DType.FLOAT32, 5, i -> gval(4, i))
                    : real(DType.FLOAT32, 5, i -> 0);
            run("subgroup broadcast from global rank " + sorted[0], sub.broadcast(byGlobal, sorted[0]));
            expectReal(byGlobal, 5, i -> gval(4, i), 0, "subgroup broadcast by global rank");
            List<Object> all = run("subgroup allGatherObject", sub.allGatherObject("global " + rank));
            expect(all.equals(Arrays.stream(sorted).mapToObj(g -> "global " + g).toList()), "subgroup objects " + all);
            run("subgroup barrier", sub.barrier());
        } else {
            // As in PyTorch, a rank outside the group does nothing there: a completed no-op.
            expect(sub.barrier().succeeded(), "a non-member's barrier is a completed no-op");
        }
        Vals.await(sub.destroy(), wait, "subgroup destroy");

        // A group of one.
        ProcessGroup solo = run("newGroup [0]", Distributed.newGroup(pg, 0));
        if (rank == 0) {
            Tensor t = real(DType.FLOAT32, 10, i -> i);
            run("allReduce in a group of one", solo.allReduce(t));
            expectReal(t, 10, i -> i, 0, "allReduce in a group of one");
        }
        Vals.await(solo.destroy(), wait, "solo destroy");
        run("barrier after subgroups", pg.barrier());
    }

    private static Map<String, Object> objectOf(int r) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("rank", r);
        m.put("name", "rank-" + r + " é");
        m.put("list", List.of(1.5, "x", true, (long) r << 40));
        return m;
    }

    private void objects() {
        List<Object> all = run("allGatherObject", pg.allGatherObject(objectOf(rank)));
        expect(all.size() == world, "allGatherObject returned " + all.size() + " objects");
        for (int r = 0; r < world; r++) {
            expect(objectOf(r).equals(all.get(r)), "allGatherObject[" + r + "] = " + all.get(r));
        }
        for (int root = 0; root < world; root++) {
            List<Object> list = new ArrayList<>(Arrays.asList("mine", rank, null));
            if (rank == root) {
                list.set(0, "from " + root);
                list.set(1, List.of(root, "x"));
                list.set(2, objectOf(root));
            }
            run("broadcastObjectList from " + root, pg.broadcastObjectList(list, root));
            List<Object> expected = Arrays.asList("from " + root, List.of(root, "x"), objectOf(root));
            expect(list.equals(expected), "broadcastObjectList from " + root + " gave " + list);
        }
    }

    private void bigAllReduce() {
        Tensor t = real(DType.FLOAT32, BIG, i -> (i & 1023) + rank * 1024);
        String what = "allReduce float32 64 MiB";
        run(what, pg.allReduce(t));
        double ranks = world * (world - 1) / 2.0 * 1024;
        expectReal(t, BIG, i -> (double) world * (i & 1023) + ranks, 0, what);
    }
}
