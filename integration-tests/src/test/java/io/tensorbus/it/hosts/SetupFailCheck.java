package io.tensorbus.it.hosts;

import io.tensorbus.distributed.Distributed;
import io.tensorbus.distributed.InitOptions;
import io.tensorbus.distributed.ProcessGroup;
import io.tensorbus.tensor.Tensor;

/**
 * One rank of a job whose rank {@code args[0]} fails its set-up: that rank's backend is told to listen on
 * 203.0.113.7, an address of no host here, so it cannot; every other rank joins the group as usual and, if it ever
 * got one, would all-reduce.
 */
public final class SetupFailCheck {
    private SetupFailCheck() {
    }

    public static void main(String[] args) {
        int failing = args.length > 0 ? Integer.parseInt(args[0]) : -1;
        InitOptions.Builder options = InitOptions.builder();
        if (Integer.parseInt(System.getenv("RANK")) == failing) {
            System.out.println("SETUP FAILING");
            System.out.flush();
            options.property("tcp.bindHost", "203.0.113.7");
        }
        ProcessGroup pg = Distributed.initProcessGroup(options.build()).await();
        pg.allReduce(Tensor.ones(4)).await();
        System.out.println("rank " + pg.rank() + " got a group");
    }
}
