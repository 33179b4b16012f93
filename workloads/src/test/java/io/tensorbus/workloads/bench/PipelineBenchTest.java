package io.tensorbus.workloads.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

class PipelineBenchTest {
    @Test
    void theSuiteSetsTheScheduleItself() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new PipelineBench(List.of("--schedule", "gpipe")));
        assertTrue(e.getMessage().contains("runs both schedules"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> new PipelineBench(List.of("--img", "8")));
    }

    @Test
    @Timeout(value = 150, unit = TimeUnit.SECONDS)
    void threeJvmsReportTheMicroBatchCountUnderBothSchedules() {
        // One micro-batch count: every count is the same code path, and each costs the suite seconds.
        List<Measurement> got = new ArrayList<>();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = new PipelineBench(List.of("--batch", "4", "--img", "32", "--batches", "1", "--micro-batches", "2",
                "--balance", "seed"))
                .run(got::add, new PrintStream(err, true, StandardCharsets.UTF_8));
        assertEquals(0, code, err.toString(StandardCharsets.UTF_8));
        List<String> lines = got.stream().map(Measurement::line).toList();
        assertEquals(2, lines.size(), lines.toString());
        for (int i = 0; i < 2; i++) {
            assertTrue(lines.get(i).matches("pipeline " + (i == 0 ? "gpipe" : "1f1b")
                    + " batch=4 img=32 micro_batches=2 s_per_batch=\\d+\\.\\d{3}"), lines.get(i));
        }
    }
}
