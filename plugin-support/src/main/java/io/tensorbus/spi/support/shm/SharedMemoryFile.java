package io.tensorbus.spi.support.shm;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.HexFormat;

/**
 * A mapped {@code /dev/shm} file that one process creates and others open by name and nonce: what
 * {@link SharedMemoryChannel} and {@link SharedMemoryArea} have in common. The creator makes it readable by its user
 * only and writes every page, so that a full {@code /dev/shm} fails at creation and not later with a bus error;
 * the name and a random nonce reach the openers over an authenticated path (an {@link #offer}), and an opener maps
 * only a file of the expected kind that carries the nonce.
 *
 *
 * <pre>
 *    0 u64 magic of the kind   8 16 bytes nonce   24.. the kind's header
 * </pre>
 */
final class SharedMemoryFile {
    static final int NONCE_BYTES = 16;
    static final long NONCE_OFFSET = 8;
    private static final SecureRandom RANDOM = new SecureRandom();

    final Path file;
    final Arena arena;
    final MemorySegment memory;
    final byte[] nonce;
    private boolean unlinked;

    private SharedMemoryFile(Path file, Arena arena, MemorySegment memory, byte[] nonce) {
        this.file = file;
        this.arena = arena;
        this.memory = memory;
        this.nonce = nonce;
    }

    /**
     * Creates and maps a file of {@code size} bytes in {@code dir} named {@code prefix}, the pid and a random suffix;
     * the nonce is written, the magic left for the caller to write last.
     *
     * @throws IOException when the directory lacks the room or the file cannot be written or mapped (it is deleted)
     */
    static SharedMemoryFile create(Path dir, String prefix, long size) throws IOException {
        long free = Files.getFileStore(dir).getUsableSpace();
        if (free < size) {
            throw new IOException(dir + " has " + free + " bytes free, " + size + " are needed");
        }
        byte[] nonce = new byte[NONCE_BYTES];
        RANDOM.nextBytes(nonce);
        Path file = dir.resolve(prefix + ProcessHandle.current().pid() + "-" + HexFormat.of().formatHex(nonce, 0, 8));
        Files.createFile(file, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        Arena arena = Arena.ofShared();
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            fill(ch, size);
            MemorySegment memory = ch.map(FileChannel.MapMode.READ_WRITE, 0, size, arena);
            MemorySegment.copy(nonce, 0, memory, ValueLayout.JAVA_BYTE, NONCE_OFFSET, NONCE_BYTES);
            return new SharedMemoryFile(file, arena, memory, nonce);
        } catch (IOException | RuntimeException e) {
            arena.close();
            Files.deleteIfExists(file);
            throw e instanceof IOException io ? io : new IOException(e.toString(), e);
        }
    }

    /** Writes every page: tmpfs allocates on write, and a full one then says so here instead of a SIGBUS later. */
    private static void fill(FileChannel ch, long size) throws IOException {
        ByteBuffer zeros = ByteBuffer.allocateDirect(1 << 20);
        for (long at = 0; at < size; ) {
            zeros.clear().limit((int) Math.min(zeros.capacity(), size - at));
            at += ch.write(zeros, at);
        }
    }

    /**
     * Maps the file an {@link #offer} names, when its name starts with {@code prefix} and it holds at least
     * {@code headerBytes}, {@code magic} and the offer's nonce.
     *
     * @throws IOException when the offer is malformed, or the file is missing or not the one offered
     */
    static SharedMemoryFile accept(Path dir, byte[] offer, String prefix, long magic, long headerBytes)
            throws IOException {
        int zero = 0;
        while (zero < offer.length && offer[zero] != 0) {
            zero++;
        }
        if (zero != offer.length - 1 - NONCE_BYTES) {
            throw new IOException("a malformed shared-memory offer of " + offer.length + " bytes");
        }
        String name = new String(offer, 0, zero, StandardCharsets.US_ASCII);
        byte[] nonce = Arrays.copyOfRange(offer, zero + 1, offer.length);
        if (!name.matches(prefix + "[0-9]+-[0-9a-f]{16}")) {
            throw new IOException("'" + name + "' is not a tensorbus shared-memory file of this kind");
        }
        Path file = dir.resolve(name);
        Arena arena = Arena.ofShared();
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            long size = ch.size();
            MemorySegment memory = ch.map(FileChannel.MapMode.READ_WRITE, 0, size, arena);
            byte[] theirs = size < headerBytes ? new byte[0]
                    : memory.asSlice(NONCE_OFFSET, NONCE_BYTES).toArray(ValueLayout.JAVA_BYTE);
            if (size < headerBytes || memory.get(ValueLayout.JAVA_LONG_UNALIGNED, 0) != magic
                    || !MessageDigest.isEqual(theirs, nonce)) {
                throw new IOException(file + " is not the file that was offered");
            }
            return new SharedMemoryFile(file, arena, memory, nonce);
        } catch (IOException | RuntimeException e) {
            arena.close();
            throw e instanceof IOException io ? io : new IOException(e.toString(), e);
        }
    }

    /** What the creator sends its peers: the file's name, a zero byte, the nonce. */
    byte[] offer() {
        byte[] n = file.getFileName().toString().getBytes(StandardCharsets.US_ASCII);
        byte[] out = new byte[n.length + 1 + NONCE_BYTES];
        System.arraycopy(n, 0, out, 0, n.length);
        System.arraycopy(nonce, 0, out, n.length + 1, NONCE_BYTES);
        return out;
    }

    /** Deletes the file (the mappings stay valid); said, not thrown, when that fails. */
    void unlink() {
        if (!unlinked) {
            unlinked = true;
            try {
                Files.deleteIfExists(file);
            } catch (IOException e) {
                System.getLogger(SharedMemoryFile.class.getName()).log(System.Logger.Level.WARNING,
                        "could not delete " + file + ": " + e);
            }
        }
    }

    /**
     * Unmaps the memory. A thread that touches it afterwards gets an {@link IllegalStateException}, not a crash:
     * the arena is shared, and closing it waits until no thread is inside an access.
     */
    void unmap() {
        arena.close();
    }
}
