package io.tensorbus.spi.support.shm;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.IOException;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A group's area: opened only with its nonce and for its membership, its buffers one memory in every mapping,
 * progress and announcements visible to the other members.
 */
@Timeout(30)
class SharedMemoryAreaTest {
    private static final Path DIR = Path.of("/dev/shm");

    private static List<Path> ourFiles() throws IOException {
        try (Stream<Path> files = Files.list(DIR)) {
            String prefix = SharedMemoryArea.PREFIX + ProcessHandle.current().pid() + "-";
            return files.filter(f -> f.getFileName().toString().startsWith(prefix)).toList();
        }
    }

    @Test
    void anAreaIsOnlyOpenedWithItsNonceAndForItsMembers() throws Exception {
        SharedMemoryArea made = SharedMemoryArea.create(DIR, 3, 8192);
        try {
            byte[] offer = made.offer();
            byte[] forged = offer.clone();
            forged[forged.length - 1] ^= 1;
            assertThrows(IOException.class, () -> SharedMemoryArea.accept(DIR, forged, 3));
            assertThrows(IOException.class, () -> SharedMemoryArea.accept(DIR, offer, 2), "another membership");
            byte[] channelName = (SharedMemoryChannel.PREFIX + "1-0123456789abcdef\0").getBytes();
            assertThrows(IOException.class, () -> SharedMemoryArea.accept(DIR,
                    Arrays.copyOf(channelName, channelName.length + 16), 3), "a name of another kind");
            SharedMemoryArea opened = SharedMemoryArea.accept(DIR, offer, 3);
            assertEquals(3, opened.members());
            assertEquals(8192, opened.sliceBytes());
            opened.close();
        } finally {
            made.unlink();
        }
        assertEquals(List.of(), ourFiles());
        assertThrows(IllegalArgumentException.class, () -> SharedMemoryArea.create(DIR, 2, 1000));
        assertThrows(IllegalArgumentException.class, () -> SharedMemoryArea.create(DIR, 0, 4096));
    }

    /** An area of two members with 4 KiB slices, created and accepted: the creator's mapping, then the other's. */
    private static SharedMemoryArea[] pair() throws IOException {
        SharedMemoryArea a = SharedMemoryArea.create(DIR, 2, 4096);
        try {
            return new SharedMemoryArea[] {a, SharedMemoryArea.accept(DIR, a.offer(), 2)};
        } finally {
            a.unlink();
        }
    }

    @Test
    void everyMappingSeesOneMemoryWithDisjointBuffers() throws Exception {
        SharedMemoryArea[] pair = pair();
        SharedMemoryArea a = pair[0];
        SharedMemoryArea b = pair[1];
        for (int m = 0; m < 2; m++) {
            for (int which = 0; which < 2; which++) {
                a.buffer(m, which).fill((byte) (1 + 2 * m + which));
            }
        }
        for (int m = 0; m < 2; m++) {
            for (int which = 0; which < 2; which++) {
                var buf = b.buffer(m, which);
                assertEquals(4096, buf.byteSize());
                assertEquals(1 + 2 * m + which, buf.get(ValueLayout.JAVA_BYTE, 0));
                assertEquals(1 + 2 * m + which, buf.get(ValueLayout.JAVA_BYTE, 4095), "buffers do not overlap");
            }
        }
        assertEquals(0, b.progress(1));
        a.publishProgress(1, 7, 70);
        assertEquals(7, b.progress(1));
        assertEquals(70, b.stamp(1, 7));
        a.publishProgress(1, 8, 80);
        assertEquals(70, b.stamp(1, 7), "the stamp of step 7 stays until step 9");
        assertEquals(80, b.stamp(1, 8));
        assertEquals(0, b.progress(0), "each member has its own counter");
    }

    @Test
    void announcementsAreReadBackByTheirSequenceUntilSixtyFourLaterOnesReplaceThem() throws Exception {
        SharedMemoryArea[] pair = pair();
        SharedMemoryArea a = pair[0];
        SharedMemoryArea b = pair[1];
        assertNull(b.announcement(0, 1), "nothing announced yet");
        a.announce(0, 1, new long[] {10, 20, 30});
        assertArrayEquals(new long[] {10, 20, 30}, b.announcement(0, 1));
        assertNull(b.announcement(1, 1), "another member's slot");
        assertNull(b.announcement(0, 2));
        a.announce(0, 65, new long[] {1, 2, 3});
        assertNull(b.announcement(0, 1), "replaced by the one 64 later");
        assertArrayEquals(new long[] {1, 2, 3}, b.announcement(0, 65));
        assertThrows(IllegalArgumentException.class, () -> a.announce(0, 3, new long[] {1}));
        assertEquals(List.of(), ourFiles());
        a.close();
        assertThrows(IllegalStateException.class, () -> a.announce(0, 2, new long[] {1, 2, 3}),
                "a closed area is refused, not touched");
    }
}
