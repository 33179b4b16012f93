package io.tensorbus.spi.support.shm;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The byte ring: order across wrap-around, back-pressure, and the sleep flags that decide who rings. */
class SharedMemoryRingTest {

    private static SharedMemoryRing ring(Arena arena, long capacity) {
        return new SharedMemoryRing(arena.allocate(SharedMemoryRing.CONTROL_BYTES, 64), arena.allocate(capacity, 64));
    }

    @Test
    void bytesComeOutInOrderAcrossManyWrapArounds() {
        try (Arena arena = Arena.ofConfined()) {
            SharedMemoryRing ring = ring(arena, 1024);
            SplittableRandom random = new SplittableRandom(3);
            byte[] all = new byte[50_000];
            random.nextBytes(all);
            MemorySegment src = MemorySegment.ofArray(all);
            byte[] got = new byte[all.length];
            long sent = 0;
            int received = 0;
            while (received < all.length) {
                long n = ring.offer(src, sent, Math.min(random.nextInt(1, 700), all.length - sent), 0);
                ring.publish(n);
                sent += n;
                assertTrue(ring.readable() <= 1024);
                MemorySegment piece = ring.readableSlice();
                long take = Math.min(piece.byteSize(), random.nextInt(0, 900));
                MemorySegment.copy(piece, ValueLayout.JAVA_BYTE, 0, got, received, (int) take);
                ring.release(take);
                received += (int) take;
            }
            assertArrayEquals(all, got);
        }
    }

    @Test
    void aFullRingTakesNothingUntilTheConsumerFreesRoom() {
        try (Arena arena = Arena.ofConfined()) {
            SharedMemoryRing ring = ring(arena, 256);
            MemorySegment src = arena.allocate(1000);
            assertEquals(256, ring.offer(src, 0, 1000, 0));
            ring.publish(256);
            assertEquals(0, ring.writable());
            assertEquals(0, ring.offer(src, 256, 744, 0));
            assertTrue(ring.waitForRoom(), "the producer may sleep on a full ring");
            assertTrue(ring.release(100), "freeing room wakes the waiting producer");
            assertFalse(ring.release(100), "only once");
            assertFalse(ring.waitForRoom(), "room is there: no sleeping");
        }
    }

    @Test
    void aSleepingConsumerIsWokenExactlyOnceAndNotWhenDataIsWaiting() {
        try (Arena arena = Arena.ofConfined()) {
            SharedMemoryRing ring = ring(arena, 256);
            MemorySegment src = arena.allocate(8);
            assertTrue(ring.sleep());
            ring.offer(src, 0, 8, 0);
            assertTrue(ring.publish(8), "the first write after sleep rings");
            ring.offer(src, 0, 8, 0);
            assertFalse(ring.publish(8), "the flag was cleared by the first");
            assertFalse(ring.sleep(), "data is waiting: the consumer stays awake");
            ring.release(16);
            assertTrue(ring.sleep());
            ring.awake();
            ring.offer(src, 0, 8, 0);
            assertFalse(ring.publish(8), "an awake consumer polls by itself");
        }
    }

    @Test
    void aCapacityThatIsNoPowerOfTwoIsRefused() {
        try (Arena arena = Arena.ofConfined()) {
            assertThrows(IllegalArgumentException.class, () -> ring(arena, 1000));
        }
    }
}
