package io.tensorbus.workloads.examples;

import io.tensorbus.distributed.ProcessGroup;
import io.tensorbus.tensor.Tensor;
import java.io.PrintStream;

/**
 * The tutorial's blocking point-to-point communication: both ranks start with a zero tensor; rank 0 adds 1
 * and {@code send}s it to rank 1, which {@code recv}s it, so both end with 1.0. Both calls block until the
 * transfer is done. Ranks beyond 1 (in a larger world) take no part and keep their 0.
 *
 * <pre>tensorbus launch --nproc-per-node 2 io.tensorbus.workloads.examples.BlockingPointToPoint</pre>
 */
public final class BlockingPointToPoint {
    private BlockingPointToPoint() {
    }

    /** Joins the job through {@code env://} and runs {@link #run(ProcessGroup)}. */
    public static void main(String[] args) throws Exception {
        ExampleMain.run(BlockingPointToPoint::run);
    }

    /** {@link #run(ProcessGroup, PrintStream)} printing to {@code System.out}. */
    public static Tensor run(ProcessGroup pg) {
        return run(pg, System.out);
    }

    /**
     * The tutorial's {@code run}: prints {@code Rank R has data X} and returns this rank's tensor.
     *
     * @throws IllegalArgumentException when the group has fewer than 2 ranks
     */
    public static Tensor run(ProcessGroup pg, PrintStream out) {
        requireTwoRanks(pg);
        Tensor tensor = Tensor.zeros(1);
        if (pg.rank() == 0) {
            tensor.addi(1);
            // Send the tensor to process 1.
            pg.send(tensor, 1);
        } else if (pg.rank() == 1) {
            // Receive the tensor from process 0.
            pg.recv(tensor, 0);
        }
        out.println("Rank " + pg.rank() + " has data " + tensor.getDouble(0));
        return tensor;
    }

    static void requireTwoRanks(ProcessGroup pg) {
        if (pg.size() < 2) {
            throw new IllegalArgumentException("point-to-point needs at least 2 ranks, the group has " + pg.size()
                    + "; start it with tensorbus launch --nproc-per-node 2");
        }
    }
}
