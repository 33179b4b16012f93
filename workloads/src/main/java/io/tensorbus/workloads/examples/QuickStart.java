package io.tensorbus.workloads.examples;

import io.tensorbus.c10d.ReduceOp;
import io.tensorbus.distributed.Distributed;
import io.tensorbus.distributed.InitOptions;
import io.tensorbus.distributed.ProcessGroup;
import io.tensorbus.tensor.Tensor;

/**
 * README's "Distributed" snippet as a whole program, kept equal to it by a test: join through
 * {@code env://}, all-reduce, make a subgroup, pass a tensor from rank 0 to rank 1. Like the PyTorch
 * tutorial's script it never destroys its group, and the process still ends when {@code main} returns (the
 * group is closed at exit, with a warning).
 *
 * <pre>tensorbus launch --nproc-per-node 2 io.tensorbus.workloads.examples.QuickStart</pre>
 */
public final class QuickStart {
    private QuickStart() {
    }

    /** Runs one rank; needs at least 2. */
    public static void main(String[] args) {
        ProcessGroup pg = Distributed.initProcessGroup(InitOptions.builder().build()).await();  // env://
        Tensor t = Tensor.ones(4);
        pg.allReduce(t, ReduceOp.SUM).await();           // every rank now holds the sum
        ProcessGroup pair = Distributed.newGroup(pg, 0, 1).await();    // every rank calls newGroup, in the same order
        if (pg.rank() == 0) {
            pg.isend(t, 1).await();                       // non-blocking point-to-point, awaited here
        } else if (pg.rank() == 1) {
            pg.irecv(t, 0).await();
        }
        System.out.println("rank " + pg.rank() + " of " + pg.size() + ": " + t + ", in the pair: " + pair.isMember());
    }
}
