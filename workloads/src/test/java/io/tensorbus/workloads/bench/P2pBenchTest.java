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

class P2pBenchTest {
    @Test
    void parsesOptionsAndRoundTripsThroughTheWorkerArguments() {
        assertEquals(P2pBench.Options.defaults(), P2pBench.Options.parse(List.of()));
        P2pBench.Options o = P2pBench.Options.parse(List.of("--max-bytes", "1048576", "--jit-warmup", "0"));
        assertEquals(new P2pBench.Options(1 << 20, 0), o);
        assertEquals(o, P2pBench.Options.parse(o.toArgs()));
    }

    @Test
    void badOptionsSayWhatIsAllowed() {
        assertMessage("Unknown options: '--world', '2'", "--world", "2");
        assertMessage("--max-bytes must be at least 4", "--max-bytes", "0");
        assertMessage("Missing required parameter for option '--max-bytes' (B)", "--max-bytes");
        assertMessage("Invalid value for option '--jit-warmup': 'lots' is not an int", "--jit-warmup", "lots");
    }

    @Test
    void iterationsFollowTheAnchor() {
        assertEquals(200, P2pBench.iterations(4));
        assertEquals(200, P2pBench.iterations(4096));
        assertEquals(10, P2pBench.iterations(1 << 20));
    }

    @Test
    @Timeout(value = 180, unit = TimeUnit.SECONDS)
    void smallSizesOnTwoJvmsReportRoundTrips() {
        List<Measurement> got = new ArrayList<>();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = new P2pBench(P2pBench.Options.parse(List.of("--max-bytes", "4096", "--jit-warmup", "5")))
                .run(got::add, new PrintStream(err, true, StandardCharsets.UTF_8));
        assertEquals(0, code, err.toString(StandardCharsets.UTF_8));
        List<String> lines = got.stream().map(Measurement::line).toList();
        assertEquals(2, lines.size(), lines.toString());
        assertTrue(lines.get(0).matches("p2p pingpong bytes=4 rtt_us=\\d+\\.\\d GBps=\\d+\\.\\d{4}"), lines.get(0));
        assertTrue(lines.get(1).startsWith("p2p pingpong bytes=4096 rtt_us="), lines.get(1));
    }

    private static void assertMessage(String expected, String... args) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> P2pBench.Options.parse(List.of(args)));
        assertTrue(e.getMessage().contains(expected), e.getMessage());
    }
}
