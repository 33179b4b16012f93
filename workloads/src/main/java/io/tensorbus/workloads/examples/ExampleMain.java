package io.tensorbus.workloads.examples;

import io.tensorbus.distributed.Distributed;
import io.tensorbus.distributed.InitOptions;
import io.tensorbus.distributed.ProcessGroup;

/** The tutorial's {@code init_processes}: join the job through {@code env://}, run a body, destroy the group. */
final class ExampleMain {
    /** The body of one process. */
    @FunctionalInterface
    interface Body {
        void run(ProcessGroup pg) throws Exception;
    }

    private ExampleMain() {
    }

    /**
     * Initialises the default group from RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT (as set by
     * {@code tensorbus launch}), runs {@code body} and destroys the group, also when {@code body} fails.
     */
    static void run(Body body) throws Exception {
        ProcessGroup pg = Distributed.initProcessGroup(InitOptions.builder().build()).await();
        try {
            body.run(pg);
        } finally {
            pg.close();
        }
    }
}
