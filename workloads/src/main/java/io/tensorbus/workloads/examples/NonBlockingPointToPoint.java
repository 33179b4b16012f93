package io.tensorbus.workloads.examples;

import io.tensorbus.distributed.ProcessGroup;
import io.tensorbus.tensor.Tensor;
import io.vertx.core.Future;
import java.io.PrintStream;

/**
 * The tutorial's non-blocking point-to-point communication: as {@link BlockingPointToPoint}, with
 * {@code isend}/{@code irecv}, which return at once with a {@link Future} (the tutorial's request) that the
 * rank then waits on. The sent tensor must not be written, nor the received one read, before the future
 * completes; after it, rank 1's tensor holds 1.0.
 *
 * <pre>tensorbus launch --nproc-per-node 2 io.tensorbus.workloads.examples.NonBlockingPointToPoint</pre>
 */
public final class NonBlockingPointToPoint {
    private NonBlockingPointToPoint() {
    }

    /** Joins the job through {@code env://} and runs {@link #run(ProcessGroup)}. */
    public static void main(String[] args) throws Exception {
        ExampleMain.run(NonBlockingPointToPoint::run);
    }

    /** {@link #run(ProcessGroup, PrintStream)} printing to {@code System.out}. */
    public static Tensor run(ProcessGroup pg) {
        return run(pg, System.out);
    }

    /**
     * The tutorial's {@code run}: starts the transfer, prints that it started, waits, then prints
     * {@code Rank R has data X}; returns this rank's tensor.
     *
     * @throws IllegalArgumentException when the group has fewer than 2 ranks
     */
    public static Tensor run(ProcessGroup pg, PrintStream out) {
        BlockingPointToPoint.requireTwoRanks(pg);
        Tensor tensor = Tensor.zeros(1);
        Future<?> req = null;
        if (pg.rank() == 0) {
            tensor.addi(1);
            // Send the tensor to process 1.
            req = pg.isend(tensor, 1);
            out.println("Rank 0 started sending");
        } else if (pg.rank() == 1) {
            // Receive the tensor from process 0.
            req = pg.irecv(tensor, 0);
            out.println("Rank 1 started receiving");
        }
        if (req != null) {
            req.await();
        }
        out.println("Rank " + pg.rank() + " has data " + tensor.getDouble(0));
        return tensor;
    }
}
