package io.tensorbus.it;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The pipeline workload's master and shard verticles under {@code VertxApplication}, launched once per test JVM on
 * loopback with three ranks: {@link MultiJvmPipelineTest} checks its output, and the multi-host test compares its
 * loss with the same job across hosts. One run serves both, as each costs the suite many seconds.
 */
public final class PipelineOnLoopback {
    /** The job's arguments after {@code --nproc-per-node 3}. */
    public static final String[] JOB = {"io.vertx.launcher.application.VertxApplication",
        "io.tensorbus.workloads.pipeline.PipelineResNet50Verticle", "-conf",
        "{\"microBatches\": [2], \"batch\": 4, \"img\": 32, \"batches\": 2}"};

    private static LaunchResult result;

    private PipelineOnLoopback() {
    }

    /** The ranks' standard output of the run, made on first use; asserted to have succeeded and leaked no RRef. */
    public static synchronized String output() {
        if (result == null) {
            String[] args = new String[JOB.length + 2];
            args[0] = "--nproc-per-node";
            args[1] = "3";
            System.arraycopy(JOB, 0, args, 2, JOB.length);
            LaunchResult r = LaunchResult.launch(args).succeeded();
            assertTrue(!r.err().contains("RRefs not released"), "no RRef leaked:\n" + r.err());
            result = r;
        }
        return result.out();
    }
}
