package io.tensorbus.workloads.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tensorbus.DType;
import io.tensorbus.tensor.Tensor;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** The soak suite's options, its sizes and its checks (the runs themselves: the integration tests' SoakTest). */
class SoakBenchTest {
    @Test
    void optionsParseWithDefaultsAndRoundTripToTheWorkers() {
        SoakBench.Options d = SoakBench.Options.parse(List.of());
        assertEquals(SoakBench.Options.defaults(), d);
        assertEquals(2000, d.warmupOf(20_000), "a tenth of the run by default");
        SoakBench.Options o = SoakBench.Options.parse(List.of("--world", "2", "--iterations", "50", "--rpc-calls",
                "70", "--max-bytes", "4096", "--sample-every", "5", "--warmup", "10", "--parts", "rpc",
                "--memory-scope", "true"));
        assertEquals(new SoakBench.Options(2, 50, 70, 4096, 5, 10, List.of("rpc"), true), o);
        assertEquals(10, o.warmupOf(50));
        assertEquals(o, SoakBench.Options.parse(o.toArgs("rpc")));
        assertEquals(List.of("collectives"), SoakBench.Options.parse(d.toArgs("collectives")).parts());
    }

    @Test
    void badOptionsAreRefusedNamingWhatIsAllowed() {
        assertTrue(assertThrows(IllegalArgumentException.class, () -> SoakBench.Options.parse(List.of("--world", "9")))
                .getMessage().contains("--world must be from 2 to 8"));
        assertTrue(assertThrows(IllegalArgumentException.class,
                () -> SoakBench.Options.parse(List.of("--parts", "collectives,gpu"))).getMessage()
                .contains("--parts takes collectives,rpc"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> SoakBench.Options.parse(List.of("--speed", "1")))
                .getMessage().contains("Unknown options: '--speed', '1'"));
        assertTrue(assertThrows(IllegalArgumentException.class,
                () -> SoakBench.Options.parse(List.of("--memory-scope", "yes"))).getMessage()
                .contains("Invalid value for option '--memory-scope': 'yes' is not a boolean"));
    }

    @Test
    void sizesSpanOneElementToTheMaximum() {
        SplittableRandom random = new SplittableRandom(1);
        int min = Integer.MAX_VALUE;
        int max = 0;
        for (int i = 0; i < 10_000; i++) {
            int n = SoakWorker.elements(random, 1 << 18);
            min = Math.min(min, n);
            max = Math.max(max, n);
        }
        assertEquals(1, min);
        assertTrue(max > (1 << 17) && max <= 1 << 18, "largest " + max);
    }

    @Test
    void aSingleWrongElementCountsTheTensorWrong() {
        Tensor t = Tensor.full(7, DType.FLOAT32, 1000);
        assertEquals(0, SoakWorker.wrong(t, 7, 1000));
        t.set(8, 999);
        assertEquals(1000, SoakWorker.wrong(t, 7, 1000));
        assertEquals(999, SoakWorker.wrong(Tensor.full(7, DType.FLOAT32, 998), 7, 999), "an element missing");
    }

    @Test
    void growthComparesTheHighestFootprintOfTheWindowAfterWarmUpWithTheLast() {
        SoakWorker.Totals t = new SoakWorker.Totals(2000, 20000);
        long mib = 1 << 20;
        for (int done = 1; done <= 20000; done++) {
            if (t.probes(done)) {
                // A footprint that swings by 20 MiB around a flat 180 MiB, then rises to 230 MiB at the very end.
                long rss = (done / 100 % 2 == 0 ? 170 : 190) * mib + (done >= 19900 ? 40 * mib : 0);
                t.observe(done, rss);
            }
        }
        assertEquals(190, SoakWorker.mib(t.rssWarm), 1e-9, "the highest of the window after the warm-up");
        assertEquals(230, SoakWorker.mib(t.rssEnd), 1e-9, "the highest of the last tenth");
        assertEquals(100.0 * 40 / 190, t.growthPct(), 1e-9);
        assertTrue(t.probes(2000) && t.probes(2100) && !t.probes(2050) && !t.probes(10000) && t.probes(18100));
    }
}
