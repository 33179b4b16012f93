package io.tensorbus.workloads.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
import org.junit.jupiter.api.Test;

class MultiProcessBenchTest {
    @Test
    void aMeasurementLineParsesBackToTheSameLineAndJson() {
        Measurement m = new Measurement("collectives", "allreduce").with("bytes", 67108864).with("world", 2)
                .with("latency_us", 21000.24, 1).with("busbw_GBps", 3.2, 4);
        Measurement back = MultiProcessBench.parse(m.line());
        assertEquals("collectives allreduce bytes=67108864 world=2 latency_us=21000.2 busbw_GBps=3.2000", back.line());
        assertEquals(m.json(), back.json());
    }

    @Test
    void malformedLinesAreRefused() {
        assertThrows(IllegalArgumentException.class, () -> MultiProcessBench.parse("p2p"));
        assertThrows(IllegalArgumentException.class, () -> MultiProcessBench.parse("p2p pingpong bytes"));
        assertThrows(IllegalArgumentException.class, () -> MultiProcessBench.parse("p2p pingpong bytes="));
        assertThrows(IllegalArgumentException.class, () -> MultiProcessBench.parse("p2p pingpong rtt_us=fast"));
    }

    @Test
    void waitingForAQuietCompilerEndsAfterAQuietSpellAndBeforeItsDeadline() {
        CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
        long start = System.nanoTime();
        MultiProcessBench.awaitQuietCompiler();
        long millis = (System.nanoTime() - start) / 1_000_000;
        assertTrue(millis <= MultiProcessBench.QUIET_COMPILER_DEADLINE_MILLIS + 1000, "waited " + millis + " ms");
        if (jit != null && jit.isCompilationTimeMonitoringSupported()) {
            assertTrue(millis >= MultiProcessBench.QUIET_COMPILER_MILLIS, "returned after " + millis + " ms");
        }
    }

    @Test
    void medianIsPythonsMedian() {
        assertEquals(2.0, MultiProcessBench.median(new double[] {3, 1, 2}), 0);
        assertEquals(2.5, MultiProcessBench.median(new double[] {4, 1, 3, 2}), 0);
        assertThrows(IllegalArgumentException.class, () -> MultiProcessBench.median(new double[0]));
    }
}
