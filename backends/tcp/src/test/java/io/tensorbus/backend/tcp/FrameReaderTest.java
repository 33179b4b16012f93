package io.tensorbus.backend.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.io.ByteArrayOutputStream;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** {@link FrameReader}: frames cut at any byte, payloads parked and resumed in stream order. */
class FrameReaderTest {

    private static Frame data(long tag, long payloadBytes) {
        return new Frame(Frame.DATA, Opcode.SEND.code, 0, Frame.NO_REDUCE, -1, -1, tag, payloadBytes, 0, 42,
                payloadBytes, 0);
    }

    private static byte payloadByte(long tag, long i) {
        return (byte) (tag * 31 + i * 7 + (i >> 8));
    }

    /** The wire bytes of data frames with these payload sizes (frame k has tag k). */
    private static byte[] stream(long... sizes) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (int k = 0; k < sizes.length; k++) {
            ByteBuf h = data(k, sizes[k]).encode();
            byte[] header = new byte[Frame.HEADER_BYTES];
            h.readBytes(header);
            h.release();
            out.writeBytes(header);
            for (long i = 0; i < sizes[k]; i++) {
                out.write(payloadByte(k, i));
            }
        }
        return out.toByteArray();
    }

    /** Records payloads; parks the frames whose tags are in {@code park} until the test resumes them. */
    private static final class Recorder implements FrameReader.Listener {
        final Set<Long> park;
        final Map<Long, MemorySegment> payloads = new HashMap<>();
        final List<Long> finished = new ArrayList<>();
        final List<Long> parked = new ArrayList<>();

        Recorder(Set<Long> park) {
            this.park = park;
        }

        Sink sinkFor(Frame f) {
            MemorySegment dest = MemorySegment.ofArray(new byte[(int) f.payloadBytes()]);
            payloads.put(f.tag(), dest);
            return Sink.copyInto(dest);
        }

        @Override
        public Sink onHeader(Frame f) {
            if (park.contains(f.tag())) {
                parked.add(f.tag());
                return null;
            }
            return sinkFor(f);
        }

        @Override
        public void onFrame(Frame f, Sink sink) {
            finished.add(f.tag());
        }
    }

    private static void feed(FrameReader reader, byte[] bytes, int from, int to, int piece) {
        for (int at = from; at < to; at += piece) {
            ByteBuf b = Unpooled.wrappedBuffer(bytes, at, Math.min(piece, to - at));
            try {
                reader.feed(b);
            } finally {
                b.release();
            }
        }
    }

    private static void assertPayloads(Recorder rec, long... sizes) {
        for (int k = 0; k < sizes.length; k++) {
            MemorySegment got = rec.payloads.get((long) k);
            assertEquals(sizes[k], got.byteSize(), "payload size of frame " + k);
            for (long i = 0; i < sizes[k]; i++) {
                if (got.get(ValueLayout.JAVA_BYTE, i) != payloadByte(k, i)) {
                    throw new AssertionError("byte " + i + " of frame " + k + " is wrong");
                }
            }
        }
    }

    @Test
    void framesCutAtAnyByteAreReassembled() {
        long[] sizes = {0, 1, 72, 100, 0, 5000, 3};
        byte[] bytes = stream(sizes);
        for (int piece : new int[] {1, 7, 71, 72, 73, 4096, bytes.length}) {
            Recorder rec = new Recorder(Set.of());
            FrameReader reader = new FrameReader(rec);
            feed(reader, bytes, 0, bytes.length, piece);
            assertEquals(List.of(0L, 1L, 2L, 3L, 4L, 5L, 6L), rec.finished, "frames in pieces of " + piece);
            assertPayloads(rec, sizes);
        }
    }

    @Test
    void parkedPayloadsResumeInStreamOrderEvenWhenTheNextFrameParksToo() {
        long[] sizes = {10, 3000, 50, 2500, 7, 4000, 9};
        byte[] bytes = stream(sizes);
        for (int piece : new int[] {13, 100, 1000}) {
            Recorder rec = new Recorder(Set.of(1L, 3L, 5L));
            FrameReader reader = new FrameReader(rec);
            // Everything arrives while frame 1 is parked: the reader must hold it, in order.
            feed(reader, bytes, 0, bytes.length, piece);
            assertEquals(List.of(1L), rec.parked, "pieces of " + piece);
            assertTrue(reader.isParked());
            reader.resume(rec.sinkFor(data(1, sizes[1])));
            assertEquals(List.of(1L, 3L), rec.parked, "the reader stops again at frame 3, pieces of " + piece);
            reader.resume(rec.sinkFor(data(3, sizes[3])));
            assertEquals(List.of(1L, 3L, 5L), rec.parked, "pieces of " + piece);
            reader.resume(rec.sinkFor(data(5, sizes[5])));
            assertEquals(List.of(0L, 1L, 2L, 3L, 4L, 5L, 6L), rec.finished, "pieces of " + piece);
            assertPayloads(rec, sizes);
        }
    }

    @Test
    void bytesArrivingWhileParkedAfterAResumeKeepTheirOrder() {
        long[] sizes = {3000, 20, 2500, 11};
        byte[] bytes = stream(sizes);
        Recorder rec = new Recorder(Set.of(0L, 2L));
        FrameReader reader = new FrameReader(rec);
        int half = bytes.length / 2;
        feed(reader, bytes, 0, half, 333);
        reader.resume(rec.sinkFor(data(0, sizes[0])));
        feed(reader, bytes, half, bytes.length, 333);
        reader.resume(rec.sinkFor(data(2, sizes[2])));
        assertEquals(List.of(0L, 1L, 2L, 3L), rec.finished);
        assertPayloads(rec, sizes);
    }

    @Test
    void aHeaderWithABadMagicIsMalformed() {
        FrameReader reader = new FrameReader(new Recorder(Set.of()));
        ByteBuf garbage = Unpooled.wrappedBuffer(new byte[Frame.HEADER_BYTES]);
        Frame.MalformedFrameException e = assertThrows(Frame.MalformedFrameException.class, () -> reader.feed(garbage));
        assertTrue(e.getMessage().contains("magic"), e.getMessage());
        garbage.release();
    }
}
