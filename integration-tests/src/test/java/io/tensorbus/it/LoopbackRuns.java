package io.tensorbus.it;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Jobs launched on loopback that two test classes need, each run once per test JVM: the multi-JVM tests check
 * their output, and the multi-host test compares it with the same job across hosts. Each run costs the suite
 * many seconds, so one serves both.
 */
public final class LoopbackRuns {
    /**
     * A job: the launcher's options on loopback, and its target with the target's arguments (what each host's
     * launcher is given too).
     */
    public record Job(List<String> options, List<String> target) {
        List<String> args() {
            List<String> all = new ArrayList<>(options);
            all.addAll(target);
            return all;
        }
    }

    /** The pipeline's master and shard verticles under {@code VertxApplication}, three ranks. */
    public static final Job PIPELINE = new Job(List.of("--nproc-per-node", "3"), List.of(
            "io.vertx.launcher.application.VertxApplication",
            "io.tensorbus.workloads.pipeline.PipelineResNet50Verticle",
            "-conf", "{\"microBatches\": [2], \"batch\": 4, \"img\": 32, \"batches\": 2}"));
    /** The parameter-server verticle under the legacy {@code io.vertx.core.Launcher}, a server and one trainer. */
    public static final Job PARAMETER_SERVER = new Job(List.of("--nproc-per-node", "2", "--timeout", "120"), List.of(
            "io.vertx.core.Launcher", "run", "io.tensorbus.workloads.ps.ParameterServerVerticle", "-conf",
            "{\"epochs\": 1, \"limit\": 256}"));

    private static final Map<Job, LaunchResult> RUNS = new ConcurrentHashMap<>();

    private LoopbackRuns() {
    }

    /** The ranks' standard output of {@code job}, run on first use; it succeeded, leaking no RRef. */
    public static synchronized String output(Job job) {
        return RUNS.computeIfAbsent(job, j -> {
            LaunchResult r = LaunchResult.launch(j.args().toArray(String[]::new)).succeeded();
            assertTrue(!r.err().contains("RRefs not released"), "no RRef leaked:\n" + r.err());
            return r;
        }).out();
    }
}
