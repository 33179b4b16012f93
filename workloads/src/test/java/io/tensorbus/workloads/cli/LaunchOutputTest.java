package io.tensorbus.workloads.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class LaunchOutputTest {
    private static String forward(String childOutput) throws InterruptedException {
        ByteArrayOutputStream sink = new ByteArrayOutputStream();
        LaunchOutput.forward(new ByteArrayInputStream(childOutput.getBytes(StandardCharsets.UTF_8)),
                new PrintStream(sink, true, StandardCharsets.UTF_8), "[rank 0] ", "test").join();
        return sink.toString(StandardCharsets.UTF_8).replace(System.lineSeparator(), "\n");
    }

    @Test
    void linesGetThePrefixAndCrLfEndsALine() throws InterruptedException {
        assertEquals("[rank 0] a\n[rank 0] b\n[rank 0] é\n", forward("a\r\nb\né"));
    }

    @Test
    void progressFramesEndedByACarriageReturnArePassedOnAsFrames() throws InterruptedException {
        assertEquals("[rank 0] epoch [#.]\r[rank 0] epoch [##]\r[rank 0]    \r[rank 0] epoch 1/1  loss 2.3\n",
                forward("epoch [#.]\repoch [##]\r   \repoch 1/1  loss 2.3\n"));
    }

    @Test
    void aPrefixedStreamSplitsWhatARankThreadPrintsAsAChildsPipeWould() {
        ByteArrayOutputStream sink = new ByteArrayOutputStream();
        try (PrintStream rank = LaunchOutput.prefixed(new PrintStream(sink, true, StandardCharsets.UTF_8),
                "[rank 1] ")) {
            rank.print("epoch [#.]\r");
            rank.println("loss 2.3");
            rank.print("half a");
            rank.flush();
            assertEquals("[rank 1] epoch [#.]\r[rank 1] loss 2.3\n", sink.toString(StandardCharsets.UTF_8)
                    .replace(System.lineSeparator(), "\n"), "a line is passed on only when it ends");
            rank.print(" line");
        }
        assertEquals("[rank 1] epoch [#.]\r[rank 1] loss 2.3\n[rank 1] half a line\n",
                sink.toString(StandardCharsets.UTF_8).replace(System.lineSeparator(), "\n"));
    }
}
