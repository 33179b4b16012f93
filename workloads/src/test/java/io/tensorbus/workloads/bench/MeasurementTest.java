package io.tensorbus.workloads.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tensorbus.tensor.Determinism;
import java.util.List;
import org.junit.jupiter.api.Test;

class MeasurementTest {
    @Test
    void lineIsSuiteNameThenKeyValuesInOrder() {
        Measurement m = new Measurement("tensor", "conv3x3").with("threads", 2).with("batch", 8)
                .with("gflops", 123.456, 1).with("s", 0.04512, 4);
        assertEquals("tensor conv3x3 threads=2 batch=8 gflops=123.5 s=0.0451", m.line());
    }

    @Test
    void jsonArrayHoldsUnquotedNumbers() {
        String json = Measurement.jsonArray(List.of(new Measurement("tensor", "sgemm").with("n", 256)
                .with("gflops", 1.25, 2)));
        assertEquals("[\n  {\"suite\": \"tensor\", \"name\": \"sgemm\", \"n\": 256, \"gflops\": 1.25}\n]\n", json);
    }

    @Test
    void textValuesAreQuotedInJsonAndWhereTheyHoldSpacesInTheLine() {
        Measurement m = new Measurement("machine", "cpu").with("model", "AMD EPYC 9R14").with("vendor", "AuthenticAMD")
                .with("cores", 2);
        assertEquals("machine cpu model=\"AMD EPYC 9R14\" vendor=AuthenticAMD cores=2", m.line());
        assertEquals("{\"suite\": \"machine\", \"name\": \"cpu\", \"model\": \"AMD EPYC 9R14\", "
                + "\"vendor\": \"AuthenticAMD\", \"cores\": 2}", m.json());
        assertThrows(IllegalArgumentException.class, () -> m.with("model", "say \"hi\""));
        assertThrows(IllegalArgumentException.class, () -> m.with("model", " "));
    }

    @Test
    void rejectsValuesThatAreNotFinite() {
        Measurement m = new Measurement("tensor", "sgemm");
        assertThrows(IllegalArgumentException.class, () -> m.with("gflops", Double.NaN, 1));
    }

    @Test
    void sgemmMeasurementNamesThreadsSizeAndRate() {
        Measurement m = new TensorBench(new Timing(0, 1, 0)).sgemm(1, 64);
        assertTrue(m.line().matches("tensor sgemm threads=1 n=64 gflops=[0-9]+\\.[0-9]"), m.line());
    }

    @Test
    void expMeasurementSaysWhetherDeterministicAndLeavesTheSwitchAsItWas() {
        boolean before = Determinism.areDeterministicAlgorithmsEnabled();
        Measurement m = new TensorBench(new Timing(0, 1, 0)).exp(1, !before);
        assertTrue(m.line().matches("tensor exp threads=1 n=4194304 deterministic=" + (before ? 0 : 1)
                + " latency_us=[0-9]+"), m.line());
        assertTrue(before == Determinism.areDeterministicAlgorithmsEnabled());
    }

    @Test
    void timingReturnsTheMedianOfPositiveDurations() {
        double s = new Timing(0, 3, 0.001).medianSeconds(() -> Math.sqrt(Math.random()));
        assertTrue(s > 0 && s < 0.01, "seconds per call " + s);
    }
}
