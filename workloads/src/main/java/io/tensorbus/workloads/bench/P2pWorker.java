package io.tensorbus.workloads.bench;

import io.tensorbus.distributed.ProcessGroup;
import io.tensorbus.tensor.Tensor;
import java.util.List;

/**
 * One rank of {@code tensorbus bench p2p}, started by {@link P2pBench} through the launcher: the ping-pong of
 * {@code tools/anchors/torch_p2p.py} with the blocking {@code send}/{@code recv}. Rank 0 prints
 * {@code p2p pingpong bytes=B rtt_us=T GBps=G} per size, after {@code --jit-warmup} round trips of 4 KiB.
 *
 * <p>Arguments: the suite's options as {@link P2pBench.Options#toArgs()} writes them.
 */
public final class P2pWorker {
    private P2pWorker() {
    }

    /** Runs the measurements of this rank (environment as set by {@code tensorbus launch}). */
    public static void main(String[] args) throws Exception {
        P2pBench.Options options = P2pBench.Options.parse(List.of(args));
        ProcessGroup pg = MultiProcessBench.join();
        try {
            if (pg.size() != 2) {
                throw new IllegalStateException("the ping-pong needs exactly 2 ranks, got " + pg.size());
            }
            Tensor small = Tensor.zeros(1024);
            for (int i = 0; i < options.jitWarmup(); i++) {
                pingPong(pg, small);
            }
            for (long nbytes : P2pBench.SIZES) {
                if (nbytes <= options.maxBytes()) {
                    Measurement m = measure(pg, (int) (nbytes / 4));
                    if (pg.rank() == 0) {
                        MultiProcessBench.report(m);
                    }
                }
            }
            MultiProcessBench.finish(pg);
        } finally {
            pg.close();
        }
    }

    /** One size: the median round trip and the anchor's one-way bandwidth {@code 2 * bytes / rtt}. */
    static Measurement measure(ProcessGroup pg, int n) {
        Tensor t = Tensor.zeros(n);
        long nbytes = 4L * n;
        check(pg, t);
        double rtt = MultiProcessBench.medianSeconds(3, P2pBench.iterations(nbytes), () -> { }, () -> pingPong(pg, t));
        return new Measurement("p2p", "pingpong").with("bytes", nbytes).with("rtt_us", rtt * 1e6, 1)
                .with("GBps", 2.0 * nbytes / rtt / 1e9, 4);
    }

    /** Rank 0 sends then receives; rank 1 receives then sends back. */
    private static void pingPong(ProcessGroup pg, Tensor t) {
        if (pg.rank() == 0) {
            pg.send(t, 1);
            pg.recv(t, 1);
        } else {
            pg.recv(t, 0);
            pg.send(t, 0);
        }
    }

    /** One round trip with marked data, checked on both sides before timing. */
    private static void check(ProcessGroup pg, Tensor t) {
        int n = t.numel();
        if (pg.rank() == 0) {
            t.filli(3);
            pg.send(t, 1);
            pg.recv(t, 1);
            expect(t, 4, n);
        } else {
            t.filli(0);
            pg.recv(t, 0);
            expect(t, 3, n);
            t.addi(1);
            pg.send(t, 0);
        }
        t.zeroi();
    }

    private static void expect(Tensor t, double value, int n) {
        for (int i : new int[] {0, n / 2, n - 1}) {
            if (t.getDouble(i) != value) {
                throw new IllegalStateException("ping-pong of " + n + " floats gave " + t.getDouble(i) + " at index "
                        + i + ", expected " + value);
            }
        }
    }
}
