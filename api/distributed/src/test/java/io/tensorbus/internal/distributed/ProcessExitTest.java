package io.tensorbus.internal.distributed;

import io.tensorbus.c10d.PeerLostException;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

class ProcessExitTest {
    @Test
    void theErrorFileSaysWhenTheRankFailedBecauseItLostAPeer() {
        var lost = new PeerLostException("default", 2, 1, "lost rank 1 on rank 0: the connection closed", null);
        String text = ProcessExit.errorText(new IllegalStateException("step 3 failed", lost));
        assertEquals("java.lang.IllegalStateException: step 3 failed\n" + ProcessExit.LOST_A_PEER + "\n", text);
    }

    @Test
    void theErrorFileOfAFailureOfItsOwnHoldsOnlyTheException() {
        var e = new IllegalStateException("rank 1 gives up\nsecond line", new RuntimeException("why"));
        assertEquals("java.lang.IllegalStateException: rank 1 gives up\n", ProcessExit.errorText(e));
    }
}
