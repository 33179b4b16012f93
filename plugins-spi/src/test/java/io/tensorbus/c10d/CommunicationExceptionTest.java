package io.tensorbus.c10d;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;

import org.junit.jupiter.api.Test;

class CommunicationExceptionTest {
    @Test
    void anOperationFailedByAnotherKeepsTheKindWithItsOwnSequenceAndMessage() {
        PeerLostException lost = new PeerLostException("g", 3, 2, "lost rank 2", null);
        PeerLostException l = assertInstanceOf(PeerLostException.class, lost.forOperation("g", 5, "recv failed"));
        assertEquals(2, l.peer());
        assertEquals(5, l.sequence());
        assertEquals("recv failed", l.getMessage());
        assertSame(lost, l.getCause());

        CommunicationTimeoutException late = new CommunicationTimeoutException("g", 3, "stall", new int[] {1, 2});
        CommunicationTimeoutException t = assertInstanceOf(CommunicationTimeoutException.class,
                late.forOperation("g", 4, "barrier failed"));
        assertArrayEquals(new int[] {1, 2}, t.missingRanks());
        assertEquals(4, t.sequence());

        CollectiveMismatchException mismatch = new CollectiveMismatchException("g", 3, "mismatch");
        assertEquals(CollectiveMismatchException.class, mismatch.forOperation("g", 7, "m").getClass());

        CommunicationException plain = new CommunicationException("g", 3, "closed", null);
        CommunicationException p = plain.forOperation("h", -1, "send failed");
        assertEquals(CommunicationException.class, p.getClass());
        assertEquals("h", p.group());
        assertSame(plain, p.getCause());
    }
}
