package io.tensorbus.backend.gloo;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.tensorbus.DType;
import io.tensorbus.c10d.ReduceOp;
import io.tensorbus.spi.Backend;
import io.tensorbus.spi.DeviceBuffer;
import io.tensorbus.spi.contract.Buffers;
import io.vertx.core.Future;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The ops of {@code gloo_script.txt}, run by a JVM rank as {@code gloo_peer.py} runs them in Python: the same
 * order, the same generated blocks (hash-like values every dtype holds exactly), every result checked.
 */
final class GlooScript {
    private static final Map<String, DType> DTYPES = Map.of("float32", DType.FLOAT32, "float64", DType.FLOAT64,
            "int32", DType.INT32, "int64", DType.INT64);
    private static final Map<String, ReduceOp> OPS = Map.of("SUM", ReduceOp.SUM, "PRODUCT", ReduceOp.PRODUCT,
            "MIN", ReduceOp.MIN, "MAX", ReduceOp.MAX);

    private final Backend backend;
    private final int rank;
    private final int world;
    private long seq;

    GlooScript(Backend backend) {
        this.backend = backend;
        this.rank = backend.rank();
        this.world = backend.size();
    }

    /** The steps of a script resource, comments and blank lines left out. */
    static List<String[]> load(String resource) throws IOException {
        try (InputStream in = GlooScript.class.getResourceAsStream(resource)) {
            String text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
            return text.lines().filter(l -> !l.isBlank() && !l.startsWith("#")).map(l -> l.trim().split("\\s+"))
                    .toList();
        }
    }

    /** Runs every step, failing with the step's text on the first wrong result. */
    void run(List<String[]> steps) throws Exception {
        for (String[] step : steps) {
            seq++;
            step(step);
        }
    }

    private long num(String text) {
        return text.equals("LAST") ? world - 1 : Long.parseLong(text);
    }

    private void step(String[] s) throws Exception {
        String what = String.join(" ", s);
        switch (s[0]) {
            case "allreduce" -> {
                DType dtype = DTYPES.get(s[1]);
                boolean small = s[2].equals("PRODUCT");
                DeviceBuffer t = data(rank, num(s[3]), dtype, small);
                await(backend.allReduce(t, OPS.get(s[2])));
                check(what, t, reduced(s[2], num(s[3]), dtype, small));
            }
            case "reduce" -> {
                DType dtype = DTYPES.get(s[1]);
                int root = (int) num(s[4]);
                DeviceBuffer t = data(rank, num(s[3]), dtype, false);
                await(backend.reduce(t, root, OPS.get(s[2])));
                if (rank == root) {
                    check(what, t, reduced(s[2], num(s[3]), dtype, false));
                }
            }
            case "broadcast" -> {
                DType dtype = DTYPES.get(s[1]);
                int root = (int) num(s[3]);
                DeviceBuffer t = data(rank, num(s[2]), dtype, false);
                await(backend.broadcast(t, root));
                check(what, t, data(root, num(s[2]), dtype, false));
            }
            case "allgather" -> {
                DType dtype = DTYPES.get(s[1]);
                List<DeviceBuffer> outs = zeros(world, num(s[2]), dtype);
                await(backend.allGather(outs, data(rank, num(s[2]), dtype, false)));
                for (int r = 0; r < world; r++) {
                    check(what + " block " + r, outs.get(r), data(r, num(s[2]), dtype, false));
                }
            }
            case "gather" -> gather(what, DTYPES.get(s[1]), num(s[2]), (int) num(s[3]));
            case "scatter" -> scatter(what, DTYPES.get(s[1]), num(s[2]), (int) num(s[3]));
            case "barrier" -> await(backend.barrier());
            case "sendrecv" -> {
                DType dtype = DTYPES.get(s[1]);
                int tag = (int) num(s[3]);
                int from = (rank + world - 1) % world;
                DeviceBuffer out = Buffers.alloc(dtype, num(s[2]));
                Future<Void> sent = backend.send(data(rank, num(s[2]), dtype, false), (rank + 1) % world, tag);
                assertEquals(from, await(backend.recv(out, from, tag)), what);
                await(sent);
                check(what, out, data(from, num(s[2]), dtype, false));
            }
            case "alltoall" -> allToAll(what, DTYPES.get(s[1]), num(s[2]), s[3].equals("even"));
            default -> throw new IllegalArgumentException("unknown step " + what);
        }
    }

    /** Rank s sends rank d {@code count(s, d)} elements of block {@code 100 s + d}. */
    private void allToAll(String what, DType dtype, long n, boolean even) throws Exception {
        List<DeviceBuffer> ins = new ArrayList<>();
        List<DeviceBuffer> outs = new ArrayList<>();
        for (int r = 0; r < world; r++) {
            ins.add(data(100L * rank + r, count(rank, r, n, even), dtype, false));
            outs.add(Buffers.alloc(dtype, count(r, rank, n, even)));
        }
        await(backend.allToAll(outs, ins));
        for (int s = 0; s < world; s++) {
            check(what + " block " + s, outs.get(s), data(100L * s + rank, count(s, rank, n, even), dtype, false));
        }
    }

    private static long count(int s, int d, long n, boolean even) {
        return even ? n : ((s + 2L * d) % 3) * n;
    }

    private void gather(String what, DType dtype, long n, int root) throws Exception {
        List<DeviceBuffer> outs = rank == root ? zeros(world, n, dtype) : List.of();
        await(backend.gather(outs, data(rank, n, dtype, false), root));
        for (int r = 0; r < outs.size(); r++) {
            check(what + " block " + r, outs.get(r), data(r, n, dtype, false));
        }
    }

    private void scatter(String what, DType dtype, long n, int root) throws Exception {
        DeviceBuffer out = Buffers.alloc(dtype, n);
        List<DeviceBuffer> ins = new ArrayList<>();
        for (int r = 0; rank == root && r < world; r++) {
            ins.add(data(1000 + r, n, dtype, false));
        }
        await(backend.scatter(out, ins, root));
        check(what, out, data(1000 + rank, n, dtype, false));
    }

    private static List<DeviceBuffer> zeros(int count, long n, DType dtype) {
        List<DeviceBuffer> out = new ArrayList<>();
        for (int r = 0; r < count; r++) {
            out.add(Buffers.alloc(dtype, n));
        }
        return out;
    }

    /** The block rank {@code r} contributes to the current op, as gloo_peer.py's {@code data} makes it. */
    DeviceBuffer data(long r, long n, DType dtype, boolean small) {
        DeviceBuffer b = Buffers.alloc(dtype, n);
        boolean floating = dtype == DType.FLOAT32 || dtype == DType.FLOAT64;
        for (long i = 0; i < n; i++) {
            long k = Math.floorMod(i * 2654435761L + r * 40503L + seq * 97L + 12345L, 2147483648L);
            long v = small ? (k % 5) - 2 : (k % 2001) - 1000;
            if (floating) {
                Buffers.put(b, i, small ? v / 2.0 : v / 64.0);
            } else {
                Buffers.putLong(b, i, v);
            }
        }
        return b;
    }

    private DeviceBuffer reduced(String op, long n, DType dtype, boolean small) {
        DeviceBuffer out = data(0, n, dtype, small);
        boolean floating = dtype == DType.FLOAT32 || dtype == DType.FLOAT64;
        for (int r = 1; r < world; r++) {
            DeviceBuffer b = data(r, n, dtype, small);
            for (long i = 0; i < n; i++) {
                if (floating) {
                    Buffers.put(out, i, combine(op, Buffers.get(out, i), Buffers.get(b, i)));
                } else {
                    Buffers.putLong(out, i, combine(op, Buffers.getLong(out, i), Buffers.getLong(b, i)));
                }
            }
        }
        return out;
    }

    private static double combine(String op, double a, double b) {
        return switch (op) {
            case "SUM" -> a + b;
            case "PRODUCT" -> a * b;
            case "MIN" -> Math.min(a, b);
            default -> Math.max(a, b);
        };
    }

    private static long combine(String op, long a, long b) {
        return switch (op) {
            case "SUM" -> a + b;
            case "PRODUCT" -> a * b;
            case "MIN" -> Math.min(a, b);
            default -> Math.max(a, b);
        };
    }

    private void check(String what, DeviceBuffer got, DeviceBuffer want) {
        long at = Buffers.mismatch(got, want);
        if (at >= 0) {
            long i = at / got.dtype().byteSize();
            throw new AssertionError("rank " + rank + ": " + what + " differs at element " + i + ": "
                    + Buffers.get(got, i) + ", expected " + Buffers.get(want, i));
        }
    }

    private static <T> T await(Future<T> f) throws Exception {
        return f.await(60, TimeUnit.SECONDS);
    }
}
