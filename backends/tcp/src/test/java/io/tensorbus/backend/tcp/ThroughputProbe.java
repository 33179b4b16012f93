package io.tensorbus.backend.tcp;

import io.tensorbus.DType;
import io.tensorbus.c10d.ReduceOp;
import io.tensorbus.spi.BackendProvider;
import io.tensorbus.spi.DeviceBuffer;
import io.tensorbus.spi.contract.Ranks;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import java.lang.foreign.Arena;
import java.time.Duration;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/** A quick in-JVM look at two ranks' throughput while tuning (not a test; the real bench is `tensorbus bench`). */
public final class ThroughputProbe {
    public static void main(String[] args) throws Exception {
        Vertx vertx = Vertx.vertx(new VertxOptions().setPreferNativeTransport(true));
        System.out.println("native transport: " + vertx.isNativeTransportEnabled());
        try (Ranks ranks = Ranks.create(BackendProvider.named("tcp"), vertx, 2, Duration.ofSeconds(60), Map.of())) {
            if (args.length == 0) {
                callbackPingPong(ranks);
            }
            long[] sizes = args.length > 1 ? new long[] {Long.parseLong(args[1])} : new long[] {4, 4 << 20, 64 << 20};
            String[] ops = args.length > 0 ? new String[] {args[0]}
                    : new String[] {"allreduce", "broadcast", "pingpong"};
            int iters = args.length > 2 ? Integer.parseInt(args[2]) : 0;
            for (long bytes : sizes) {
                DeviceBuffer a = buf(bytes), b = buf(bytes);
                for (String op : ops) {
                    double[] t = new double[iters > 0 ? iters : bytes > 1 << 20 ? 8 : 200];
                    for (int i = -3; i < t.length; i++) {
                        Future.all(ranks.get(0).barrier(), ranks.get(1).barrier()).await(10, TimeUnit.SECONDS);
                        long s = System.nanoTime();
                        switch (op) {
                            case "allreduce" -> Future.all(ranks.get(0).allReduce(a, ReduceOp.SUM),
                                    ranks.get(1).allReduce(b, ReduceOp.SUM)).await(60, TimeUnit.SECONDS);
                            case "broadcast" -> Future.all(ranks.get(0).broadcast(a, 0),
                                    ranks.get(1).broadcast(b, 0)).await(60, TimeUnit.SECONDS);
                            default -> {
                                Future<Integer> r1 = ranks.get(1).recv(b, 0, 0);
                                ranks.get(0).send(a, 1, 0);
                                r1.await(60, TimeUnit.SECONDS);
                                Future<Integer> r0 = ranks.get(0).recv(a, 1, 0);
                                ranks.get(1).send(b, 0, 0);
                                r0.await(60, TimeUnit.SECONDS);
                            }
                        }
                        if (i >= 0) {
                            t[i] = (System.nanoTime() - s) / 1e9;
                        }
                    }
                    Arrays.sort(t);
                    double med = t[t.length / 2];
                    double bw = op.equals("pingpong") ? 2.0 * bytes / med / 1e9 : bytes / med / 1e9;
                    System.out.printf("%s bytes=%d median_us=%.1f GBps=%.3f%n", op, bytes, med * 1e6, bw);
                }
            }
        }
        vertx.close();
    }

    /** Ping-pong driven from completion callbacks: the transport's own latency, without user-thread wake-ups. */
    private static void callbackPingPong(Ranks ranks) throws Exception {
        DeviceBuffer a = buf(4), b = buf(4);
        int rounds = 2000;
        CompletableFuture<Long> done = new CompletableFuture<>();
        // rank 1 echoes whatever arrives
        Runnable[] echo = new Runnable[1];
        echo[0] = () -> ranks.get(1).recv(b, 0,
                9).onSuccess(x -> { ranks.get(1).send(b, 0, 9); if (x >= 0) echo[0].run(); });
        echo[0].run();
        int[] left = {rounds};
        long start = System.nanoTime();
        Runnable[] ping = new Runnable[1];
        ping[0] = () -> {
            ranks.get(0).recv(a, 1, 9).onSuccess(x -> {
                if (--left[0] == 0) {
                    done.complete(System.nanoTime() - start);
                } else {
                    ping[0].run();
                }
            });
            ranks.get(0).send(a, 1, 9);
        };
        ping[0].run();
        long ns = done.get(60, TimeUnit.SECONDS);
        System.out.printf("callback pingpong bytes=4 rtt_us=%.1f%n", ns / 1e3 / rounds);
    }

    private static DeviceBuffer buf(long bytes) {
        return DeviceBuffer.host(Arena.ofAuto().allocate(bytes, 64), DType.FLOAT32, bytes / 4);
    }
}
