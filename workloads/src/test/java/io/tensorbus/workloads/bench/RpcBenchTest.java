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

class RpcBenchTest {
    @Test
    void parsesOptionsAndRoundTripsThroughTheWorkerArguments() {
        assertEquals(RpcBench.Options.defaults(), RpcBench.Options.parse(List.of()));
        RpcBench.Options o = RpcBench.Options.parse(List.of("--max-bytes", "4096", "--jit-warmup", "0"));
        assertEquals(new RpcBench.Options(0, 4096), o);
        assertEquals(o, RpcBench.Options.parse(o.toArgs()));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> RpcBench.Options.parse(List.of("--world", "3")));
        assertTrue(e.getMessage().startsWith("Unknown options: '--world', '3'"), e.getMessage());
    }

    @Test
    @Timeout(value = 90, unit = TimeUnit.SECONDS)
    void twoWorkerJvmsReportTheAnchorsLines() {
        List<Measurement> got = new ArrayList<>();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = new RpcBench(RpcBench.Options.parse(List.of("--jit-warmup", "0", "--max-bytes", "4096")))
                .run(got::add, new PrintStream(err, true, StandardCharsets.UTF_8));
        assertEquals(0, code, err.toString(StandardCharsets.UTF_8));
        List<String> lines = got.stream().map(Measurement::line).toList();
        assertEquals(5, lines.size(), lines.toString());
        assertTrue(lines.get(0).matches("rpc sync rtt_us=\\d+\\.\\d"), lines.get(0));
        assertTrue(lines.get(1).matches("rpc sync_on_event_loop rtt_us=\\d+\\.\\d"), lines.get(1));
        assertTrue(lines.get(2).matches("rpc async calls_per_s=\\d+"), lines.get(2));
        assertTrue(lines.get(3).matches("rpc echo bytes=4096 rtt_us=\\d+\\.\\d GBps=\\d+\\.\\d{3}"), lines.get(3));
        assertTrue(lines.get(4).matches("rpc remote per_s=\\d+"), lines.get(4));
    }
}
