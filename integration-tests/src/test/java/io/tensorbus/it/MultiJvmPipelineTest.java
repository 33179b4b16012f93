package io.tensorbus.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The pipeline workload, and a pipeline whose stage worker dies mid-step ({@link PipelineFaultCheck}), across JVMs. */
class MultiJvmPipelineTest {
    private static final Pattern FAILED = Pattern.compile("STEP FAILED ([\\d.]+) (.*)");

    /** Runs {@code tensorbus} with {@code args} in-process; its stdout, once it succeeded and leaked no RRef. */
    private static String tensorbus(String... args) {
        LaunchResult r = LaunchResult.tensorbus(args).succeeded();
        assertTrue(!r.err().contains("RRefs not released"), "no RRef leaked:\n" + r.err());
        return r.out();
    }

    @Test
    @Timeout(150)
    void launchRunsTheMasterAndShardVerticlesUnderVertxApplication() {
        String o = LoopbackRuns.output(LoopbackRuns.PIPELINE);
        assertTrue(Pattern.compile("(?m)^\\[rank 0] pipeline gpipe batch=4 img=32 micro_batches=2"
                + " s_per_batch=\\d+\\.\\d{3}$").matcher(o).find(), o);
    }

    @Test
    @Timeout(150)
    void runPipelineResNet50TimesEveryMicroBatchCountOnThreeJvms() {
        String o = tensorbus("run", "pipeline-resnet50", "--micro-batches", "1,2", "--batch", "4", "--img", "32",
                "--batches", "1");
        assertTimed(o);
    }

    @Test
    @Timeout(150)
    void runPipelineResNet50WithRanksAsThreadsTimesEveryMicroBatchCountInOneJvm() {
        LaunchResult r = LaunchResult.tensorbus("run", "pipeline-resnet50", "--ranks-as-threads", "--micro-batches",
                "1,2", "--batch", "4", "--img", "32", "--batches", "1").succeeded();
        assertTrue(r.err().contains("starting 1 process(es) with 3 rank thread(s)"), r.err());
        assertTrue(!r.err().contains("RRefs not released"), "no RRef leaked:\n" + r.err());
        assertTimed(r.out());
    }

    /** The master's line for each micro-batch count the two runs above time. */
    private static void assertTimed(String o) {
        for (int micro : new int[] {1, 2}) {
            assertTrue(Pattern.compile("(?m)^\\[rank 0] pipeline gpipe batch=4 img=32 micro_batches=" + micro
                    + " s_per_batch=\\d+\\.\\d{3}$").matcher(o).find(), o);
        }
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"GPIPE", "ONE_F_ONE_B"})
    @Timeout(120)
    void aStageWorkerKilledMidStepFailsTheStepNamingItAndLeavesNoContext(String schedule) throws Exception {
        try (ChildJob job = ChildJob.start(3, PipelineFaultCheck.class.getName(), schedule)) {
            for (int r : new int[] {0, 1}) {
                Integer code = job.get(r).awaitExit(Duration.ofSeconds(90));
                String o = job.get(r).output();
                assertEquals(0, code, o);
                assertTrue(o.contains("CONTEXTS 0"), "no context left on worker" + r + ":\n" + o);
            }
            String o = job.get(0).output();
            assertTrue(o.contains("STEP 1 OK"), o);
            Matcher m = FAILED.matcher(o);
            assertTrue(m.find(), o);
            assertTrue(Double.parseDouble(m.group(1)) < 30, "within the 30 s deadline: " + o);
            assertTrue(m.group(2).contains("worker2"), "names the killed stage's worker: " + o);
            assertTrue(job.get(2).output().contains("HALTING"), job.get(2).output());
        }
    }
}
