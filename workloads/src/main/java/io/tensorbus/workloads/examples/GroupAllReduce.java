package io.tensorbus.workloads.examples;

import io.tensorbus.c10d.ReduceOp;
import io.tensorbus.distributed.Distributed;
import io.tensorbus.distributed.ProcessGroup;
import io.tensorbus.tensor.Tensor;
import java.io.PrintStream;

/**
 * The tutorial's all-reduce example: every rank creates the group of ranks 0 and 1
 * ({@code dist.new_group([0, 1])}), and the members sum a tensor of ones over it, so ranks 0 and 1 end with
 * 2.0. Ranks outside the group (in a world larger than 2) keep their 1.0.
 *
 * <pre>tensorbus launch --nproc-per-node 2 io.tensorbus.workloads.examples.GroupAllReduce</pre>
 */
public final class GroupAllReduce {
    private GroupAllReduce() {
    }

    /** Joins the job through {@code env://} and runs {@link #run(ProcessGroup)}. */
    public static void main(String[] args) throws Exception {
        ExampleMain.run(GroupAllReduce::run);
    }

    /** {@link #run(ProcessGroup, PrintStream)} printing to {@code System.out}. */
    public static Tensor run(ProcessGroup pg) {
        return run(pg, System.out);
    }

    /**
     * The tutorial's {@code run}: prints {@code Rank R has data X} and returns this rank's tensor.
     *
     * @throws IllegalArgumentException when the world has fewer than 2 ranks (the group names ranks 0 and 1)
     */
    public static Tensor run(ProcessGroup pg, PrintStream out) {
        BlockingPointToPoint.requireTwoRanks(pg);
        // Every rank takes part in creating the group, members or not.
        ProcessGroup group = Distributed.newGroup(pg, 0, 1).await();
        try {
            Tensor tensor = Tensor.ones(1);
            if (group.isMember()) {
                group.allReduce(tensor, ReduceOp.SUM).await();
            }
            out.println("Rank " + pg.rank() + " has data " + tensor.getDouble(0));
            return tensor;
        } finally {
            group.close();
        }
    }
}
