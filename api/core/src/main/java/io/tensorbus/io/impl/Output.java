package io.tensorbus.io.impl;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.WritableByteChannel;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.ThreadLocalRandom;

/** Writing helpers: whole-segment channel writes and replace-on-success file writes. */
public final class Output {
    private Output() {
    }

    /** Writes the body of a file. */
    @FunctionalInterface
    public interface Body {
        /** Writes everything to {@code out}. */
        void writeTo(WritableByteChannel out) throws IOException;
    }

    /**
     * Writes a file through a temporary file in the same folder that is renamed over {@code target} once
     * complete, so a crash or error mid-write never leaves a truncated checkpoint where a good one was.
     *
     * @throws IOException when writing or renaming fails (the temporary file is then deleted)
     */
    public static void atomically(Path target, Body body) throws IOException {
        Path tmp = target.resolveSibling("." + target.getFileName() + "."
                + Long.toHexString(ThreadLocalRandom.current().nextLong()) + ".tmp");
        try {
            try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
                body.writeTo(ch);
            }
            move(tmp, target);
        } finally {
            Files.deleteIfExists(tmp);
        }
    }

    private static void move(Path tmp, Path target) throws IOException {
        try {
            Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (AtomicMoveNotSupportedException e) {
            Files.move(tmp, target, StandardCopyOption.REPLACE_EXISTING);
        }
    }

    /** Writes all bytes of a segment (of any size) to a blocking channel. */
    public static void writeFully(WritableByteChannel out, MemorySegment segment) throws IOException {
        for (long done = 0; done < segment.byteSize(); ) {
            ByteBuffer buf = segment.asSlice(done, Math.min(ByteInput.CHUNK, segment.byteSize() - done)).asByteBuffer();
            while (buf.hasRemaining()) {
                out.write(buf);
            }
            done += buf.capacity();
        }
    }

    /** Writes all bytes of an array to a blocking channel. */
    public static void writeFully(WritableByteChannel out, byte[] bytes) throws IOException {
        ByteBuffer buf = ByteBuffer.wrap(bytes);
        while (buf.hasRemaining()) {
            out.write(buf);
        }
    }
}
