package io.tensorbus.spi.support.shm;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.channel.DefaultEventLoop;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.util.concurrent.EventExecutor;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Channel files and the links over them: nonces, what a link reports, and frames larger than a ring. */
@Timeout(60)
class SharedMemoryLinkTest {
    private static final Path DIR = Path.of("/dev/shm");
    private static final SharedMemoryLink.Polling POLLING = new SharedMemoryLink.Polling(50_000, 1_000_000);

    /** The channel files this JVM made that still exist. */
    private static List<Path> ourFiles() throws IOException {
        try (Stream<Path> files = Files.list(DIR)) {
            String prefix = SharedMemoryChannel.PREFIX + ProcessHandle.current().pid() + "-";
            return files.filter(f -> f.getFileName().toString().startsWith(prefix)).toList();
        }
    }

    /** Collects every byte it is offered into {@code into}; counts down {@code done} when it is full. */
    private static class Collect implements SharedMemoryLink.Reader {
        final byte[] into;
        final CountDownLatch done = new CountDownLatch(1);
        int filled;

        Collect(int bytes) {
            into = new byte[bytes];
        }

        @Override
        public long consume(MemorySegment bytes) {
            int n = (int) Math.min(bytes.byteSize(), into.length - filled);
            MemorySegment.copy(bytes, ValueLayout.JAVA_BYTE, 0, into, filled, n);
            filled += n;
            if (filled == into.length) {
                done.countDown();
            }
            return n;
        }

        @Override
        public boolean isParked() {
            return false;
        }
    }

    private static boolean run(Runnable step) {
        step.run();
        return true;
    }

    /**
     * Two links over one channel of 64 KiB rings, each polled on an event loop of its own: the writer's reader
     * takes nothing, the reader's is {@code reader}. Closing closes both links (which unmaps their channels) and
     * the loops.
     */
    private static final class LinkPair implements AutoCloseable {
        final DefaultEventLoop writerLoop = new DefaultEventLoop();
        final DefaultEventLoop readerLoop = new DefaultEventLoop();
        final SharedMemoryLink writer;
        final SharedMemoryLink reader;

        LinkPair(SharedMemoryLink.Reader reader) throws IOException {
            SharedMemoryChannel made = SharedMemoryChannel.create(DIR, 65536);
            SharedMemoryChannel opened = SharedMemoryChannel.accept(DIR, made.offer());
            SharedMemoryLink[] links = new SharedMemoryLink[2];
            links[0] = new SharedMemoryLink(made, new Collect(0), writerLoop,
                    () -> readerLoop.execute(() -> links[1].wake()), POLLING, () -> true, SharedMemoryLinkTest::run);
            links[1] = new SharedMemoryLink(opened, reader, readerLoop,
                    () -> writerLoop.execute(links[0]::wake), POLLING, () -> false, SharedMemoryLinkTest::run);
            this.writer = links[0];
            this.reader = links[1];
        }

        @Override
        public void close() throws Exception {
            try {
                readerLoop.submit(() -> reader.close(new IOException("done"))).get();
                writerLoop.submit(() -> writer.close(new IOException("done"))).get();
            } finally {
                writerLoop.shutdownGracefully(0, 1, TimeUnit.SECONDS);
                readerLoop.shutdownGracefully(0, 1, TimeUnit.SECONDS);
            }
        }
    }

    @Test
    void aChannelFileIsOnlyOpenedWithItsNonce() throws Exception {
        try (SharedMemoryChannel made = SharedMemoryChannel.create(DIR, 65536)) {
            try {
                byte[] offer = made.offer();
                byte[] forged = offer.clone();
                forged[forged.length - 1] ^= 1;
                assertThrows(IOException.class, () -> SharedMemoryChannel.accept(DIR, forged));
                assertThrows(IOException.class, () -> SharedMemoryChannel.open(DIR, "../etc/passwd", new byte[16]));
                try (SharedMemoryChannel opened = SharedMemoryChannel.accept(DIR, offer)) {
                    assertFalse(opened.name().isEmpty());
                }
            } finally {
                made.unlink();
            }
        }
        assertEquals(List.of(), ourFiles());
    }

    @Test
    void aLinkSaysWhatItsRingsHoldForStallReports() throws Exception {
        try (SharedMemoryChannel made = SharedMemoryChannel.create(DIR, 65536);
             SharedMemoryChannel opened = SharedMemoryChannel.accept(DIR, made.offer())) {
            // No event loop: state() only reads the rings.
            SharedMemoryLink link = new SharedMemoryLink(made, new Collect(0), null, () -> { }, POLLING,
                    () -> false, SharedMemoryLinkTest::run);
            assertEquals(null, link.state(), "an empty link holds nothing worth a report");
            opened.outgoing().offer(MemorySegment.ofArray(new byte[100]), 0, 100, 0);
            opened.outgoing().publish(100);
            String state = link.state();
            assertTrue(state.startsWith("100 bytes from it unread here, 0 bytes to it unread there"), state);
        }
        assertEquals(List.of(), ourFiles());
    }

    /**
     * While a link polls for data (here for up to a minute) its event loop still runs its other work: a timer due
     * in a millisecond fires within a fraction of a second. Polling through the task queue held the loop for
     * Netty's whole task quantum (a second), and a doorbell of another connection on that loop waited as long.
     */
    @Test
    void aSpinningLinkLeavesItsEventLoopToOtherWork() throws Exception {
        MultiThreadIoEventLoopGroup group = new MultiThreadIoEventLoopGroup(1,
                NioIoHandler.newFactory());
        EventExecutor loop = group.next();
        SharedMemoryChannel made = SharedMemoryChannel.create(DIR, 65536);
        SharedMemoryChannel opened = SharedMemoryChannel.accept(DIR, made.offer());
        try {
            SharedMemoryLink link = new SharedMemoryLink(made, new Collect(0), loop, () -> { },
                    new SharedMemoryLink.Polling(60_000_000_000L, 60_000_000_000L), () -> true,
                    SharedMemoryLinkTest::run);
            loop.submit(link::expect).get();
            Thread.sleep(50); // spinning now
            long t0 = System.nanoTime();
            CountDownLatch fired = new CountDownLatch(1);
            loop.schedule(fired::countDown, 1, TimeUnit.MILLISECONDS);
            assertTrue(fired.await(10, TimeUnit.SECONDS));
            long millis = (System.nanoTime() - t0) / 1_000_000;
            assertTrue(millis < 300, "the timer fired after " + millis + " ms");
            loop.submit(() -> link.close(new IOException("done"))).get();
            opened.close();
        } finally {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
        }
        assertEquals(List.of(), ourFiles());
    }

    /**
     * A frame four times the ring's size, sent while the reader is not yet polling: what did not fit was copied
     * when {@code writeOrCopy} returned, so changing the source afterwards changes nothing that arrives.
     */
    @Test
    void writeOrCopySnapshotsWhatDoesNotFitInTheRing() throws Exception {
        byte[] header = {1, 2, 3, 4, 5, 6, 7};
        byte[] payload = new byte[4 * 65536 + 13];
        for (int i = 0; i < payload.length; i++) {
            payload[i] = (byte) (i * 31 + 7);
        }
        byte[] expected = new byte[header.length + payload.length];
        System.arraycopy(header, 0, expected, 0, header.length);
        System.arraycopy(payload, 0, expected, header.length, payload.length);
        Collect collect = new Collect(expected.length);
        try (LinkPair links = new LinkPair(collect)) {
            var written = links.writer.writeOrCopy(0, MemorySegment.ofArray(header), MemorySegment.ofArray(payload));
            Arrays.fill(payload, (byte) 0);
            Arrays.fill(header, (byte) 0);
            links.readerLoop.execute(links.reader::poll);
            assertTrue(collect.done.await(30, TimeUnit.SECONDS), "received " + collect.filled + " bytes");
            written.await(30, TimeUnit.SECONDS);
            assertArrayEquals(expected, collect.into);
            assertEquals(1, links.writer.ringFullCount(), "one frame found the ring full, counted once");
            assertTrue(links.writer.ringFullNanos() > 0, "and waited for room until the reader took it");
            assertEquals(0, links.reader.ringFullCount(), "the reader wrote nothing");
        }
        assertEquals(List.of(), ourFiles());
    }

    /**
     * With patience, the calling thread writes a frame sixteen times the ring's size itself while the peer reads:
     * nothing is left to copy, so the write is complete when the call returns.
     */
    @Test
    void aPatientWriterPutsAFrameLargerThanTheRingInItselfWhileThePeerReads() throws Exception {
        byte[] payload = new byte[16 * 65536];
        new Random(5).nextBytes(payload);
        Collect collect = new Collect(payload.length);
        try (LinkPair links = new LinkPair(collect)) {
            links.readerLoop.submit(links.reader::expect).get();
            var written = links.writer.writeOrCopy(TimeUnit.SECONDS.toNanos(20), MemorySegment.ofArray(payload));
            assertTrue(written.succeeded(), "nothing was left to copy and queue");
            assertTrue(collect.done.await(30, TimeUnit.SECONDS), "received " + collect.filled + " bytes");
            assertArrayEquals(payload, collect.into);
        }
        assertEquals(List.of(), ourFiles());
    }

    /**
     * A caller's thread takes the frame it wants straight from the ring, leaves a frame that is not its own to
     * the event loop (which reads it once the caller stops), and gives up after its patience when nothing comes.
     */
    @Test
    void aCallersThreadTakesItsFrameAndLeavesTheNextOneToTheEventLoop() throws Exception {
        Collect collect = new Collect(4) {
            @Override
            public boolean betweenFrames() {
                return filled == 0;
            }
        };
        // Frames of a one-byte header naming the frame, then three bytes of payload.
        MemorySegment got = MemorySegment.ofArray(new byte[3]);
        SharedMemoryLink.Taker frameA = h -> h.get(ValueLayout.JAVA_BYTE, 0) == 'A' ? got : null;
        try (LinkPair links = new LinkPair(collect)) {
            long start = System.nanoTime();
            assertFalse(links.reader.pollOnCallerThread(TimeUnit.MILLISECONDS.toNanos(20), 1, frameA, () -> true));
            assertTrue(System.nanoTime() - start >= TimeUnit.MILLISECONDS.toNanos(20), "gave up before its patience");

            // The caller polls before the frames are written: a frame written while nobody polls may go to the
            // event loop first (the peer rings, the loop reads), which is the link working as it should.
            CountDownLatch polling = new CountDownLatch(1);
            var taken = CompletableFuture.supplyAsync(
                    () -> links.reader.pollOnCallerThread(TimeUnit.SECONDS.toNanos(20), 1, frameA, () -> {
                        polling.countDown();
                        return true;
                    }));
            assertTrue(polling.await(30, TimeUnit.SECONDS));
            assertTrue(links.writer.tryWriteNow(MemorySegment.ofArray(new byte[] {'A', 7, 8, 9})));
            assertTrue(links.writer.tryWriteNow(MemorySegment.ofArray(new byte[] {'B', 4, 5, 6})));
            assertTrue(taken.get(30, TimeUnit.SECONDS));
            assertArrayEquals(new byte[] {7, 8, 9}, got.toArray(ValueLayout.JAVA_BYTE));
            // Once the caller stops, the event loop reads on: B, and only B (checked below), reaches the reader.

            start = System.nanoTime();
            assertFalse(links.reader.pollOnCallerThread(TimeUnit.SECONDS.toNanos(20), 1, frameA, () -> true));
            assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(10), "waited for a frame it does not take");
            assertTrue(collect.done.await(30, TimeUnit.SECONDS), "the loop read " + collect.filled + " bytes of B");
            assertArrayEquals(new byte[] {'B', 4, 5, 6}, collect.into);
        }
        assertEquals(List.of(), ourFiles());
    }

    /**
     * When the peer has closed, its last frames belong to the event loop even while a caller's thread still polls
     * for a frame of its own: a plain poll leaves them to that caller, {@code drainRemaining} reads them. Losing
     * them lost a leaving rank's GOODBYE and the data of its last send.
     */
    @Test
    void drainRemainingReadsWhatTheLeavingPeerWroteWhileACallerPolls() throws Exception {
        Collect collect = new Collect(1) {
            @Override
            public boolean betweenFrames() {
                return true;
            }
        };
        // The caller needs two header bytes to decide; the peer writes only one, so the caller polls on.
        SharedMemoryLink.Taker never = h -> null;
        try (LinkPair links = new LinkPair(collect)) {
            CountDownLatch polling = new CountDownLatch(1);
            var taken = CompletableFuture.supplyAsync(
                    () -> links.reader.pollOnCallerThread(TimeUnit.SECONDS.toNanos(20), 2, never, () -> {
                        polling.countDown();
                        return true;
                    }));
            assertTrue(polling.await(30, TimeUnit.SECONDS));
            assertTrue(links.writer.tryWriteNow(MemorySegment.ofArray(new byte[] {42})));
            links.readerLoop.submit(links.reader::poll).get();
            assertEquals(0, collect.filled, "a plain poll leaves the ring to the polling caller");
            assertTrue(links.readerLoop.submit(links.reader::drainRemaining).get());
            assertEquals(1, collect.filled);
            assertEquals(42, collect.into[0]);
            assertFalse(taken.isDone(), "the caller was still polling");
            links.readerLoop.submit(() -> links.reader.close(new IOException("the peer closed"))).get();
            assertFalse(taken.get(30, TimeUnit.SECONDS), "a closed link gives the caller nothing");
        }
        assertEquals(List.of(), ourFiles());
    }
}
