package io.tensorbus.spi.support.shm;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;

/**
 * The shared memory of two processes on one host: a file under {@code /dev/shm} holding one
 * {@link SharedMemoryRing} each way, which both map. One side creates the file (the tcp backend: the rank that
 * accepted the connection; RPC: the caller), readable by its user only, every page written so that a full
 * {@code /dev/shm} fails here and not later with a bus error; it names the file to its peer over the authenticated
 * socket together with a random nonce, and deletes it as soon as the peer has it mapped: from then on only the two
 * mappings hold the memory, and it goes away with the processes however they end.
 *
 * <pre>
 *    0 u64 magic 'TBSHM001'   8 16 bytes nonce   24 u64 ring capacity
 *   64 ring 0 control (creator to opener)   320 ring 1 control (opener to creator)
 * 4096 ring 0 data, then ring 1 data
 * </pre>
 */
public final class SharedMemoryChannel implements AutoCloseable {
    /** The prefix of every channel file, followed by the creator's pid. */
    public static final String PREFIX = "tensorbus-";
    public static final int NONCE_BYTES = SharedMemoryFile.NONCE_BYTES;
    private static final long MAGIC = 0x313030_4d48_5342_54L; // "TBSHM001" read little-endian
    private static final long HEADER_BYTES = 4096;
    private static final long CONTROL_0 = 64;
    private static final long CONTROL_1 = CONTROL_0 + SharedMemoryRing.CONTROL_BYTES;

    private final SharedMemoryFile file;
    private final SharedMemoryRing outgoing;
    private final SharedMemoryRing incoming;

    private SharedMemoryChannel(SharedMemoryFile file, boolean creator) {
        this.file = file;
        MemorySegment memory = file.memory;
        long capacity = memory.get(ValueLayout.JAVA_LONG_UNALIGNED, 24);
        SharedMemoryRing r0 = new SharedMemoryRing(memory.asSlice(CONTROL_0, SharedMemoryRing.CONTROL_BYTES),
                memory.asSlice(HEADER_BYTES, capacity));
        SharedMemoryRing r1 = new SharedMemoryRing(memory.asSlice(CONTROL_1, SharedMemoryRing.CONTROL_BYTES),
                memory.asSlice(HEADER_BYTES + capacity, capacity));
        this.outgoing = creator ? r0 : r1;
        this.incoming = creator ? r1 : r0;
    }

    /** The bytes a channel with rings of {@code ringBytes} each takes in {@code /dev/shm}. */
    public static long fileBytes(long ringBytes) {
        return HEADER_BYTES + 2 * ringBytes;
    }

    /**
     * Creates a channel's file in {@code dir} with two rings of {@code ringBytes} (a power of two) and maps it.
     *
     * @throws IOException when the directory lacks the room or the file cannot be written or mapped (the file
     *         is deleted again)
     */
    public static SharedMemoryChannel create(Path dir, long ringBytes) throws IOException {
        SharedMemoryFile f = SharedMemoryFile.create(dir, PREFIX, fileBytes(ringBytes));
        f.memory.set(ValueLayout.JAVA_LONG_UNALIGNED, 24, ringBytes);
        f.memory.set(ValueLayout.JAVA_LONG_UNALIGNED, 0, MAGIC);
        return new SharedMemoryChannel(f, true);
    }

    /**
     * Maps the channel file {@code name} in {@code dir} that a peer created and named together with
     * {@code nonce}.
     *
     * @throws IOException when the name is not one this class makes, or the file is missing, of another size,
     *         or does not carry the nonce
     */
    public static SharedMemoryChannel open(Path dir, String name, byte[] nonce) throws IOException {
        byte[] n = name.getBytes(StandardCharsets.US_ASCII);
        byte[] offer = Arrays.copyOf(n, n.length + 1 + nonce.length);
        System.arraycopy(nonce, 0, offer, n.length + 1, nonce.length);
        return accept(dir, offer);
    }

    /** The file's name (what the creator sends its peer). */
    public String name() {
        return file.file.getFileName().toString();
    }

    /** What the creator sends its peer: the file's name, a zero byte, the nonce. */
    public byte[] offer() {
        return file.offer();
    }

    /**
     * Maps the channel an {@link #offer} names.
     *
     * @throws IOException when the offer is malformed, or the file is missing, of another size, or does not carry
     *         the nonce
     */
    public static SharedMemoryChannel accept(Path dir, byte[] offer) throws IOException {
        SharedMemoryFile f = SharedMemoryFile.accept(dir, offer, PREFIX, MAGIC, HEADER_BYTES);
        long size = f.memory.byteSize();
        long capacity = f.memory.get(ValueLayout.JAVA_LONG_UNALIGNED, 24);
        if (capacity <= 0 || Long.bitCount(capacity) != 1 || fileBytes(capacity) != size) {
            f.unmap();
            throw new IOException(f.file + " is not the channel that was offered");
        }
        SharedMemoryChannel channel = new SharedMemoryChannel(f, false);
        // Mapped by both now: the opener deletes it too, so that a creator killed before it hears the answer
        // leaves nothing behind.
        channel.unlink();
        return channel;
    }

    /** The ring this side writes. */
    public SharedMemoryRing outgoing() {
        return outgoing;
    }

    /** The ring this side reads. */
    public SharedMemoryRing incoming() {
        return incoming;
    }

    /** Deletes the file (once both sides mapped it, or the offer failed); the mappings stay valid. */
    public void unlink() {
        file.unlink();
    }

    /** Unmaps the memory; nothing may touch the rings after this. */
    @Override
    public void close() {
        file.unmap();
    }

    /**
     * What identifies the host's shared memory, as NCCL checks it: the kernel's boot id and the device of
     * {@code dir}. Two processes with the same identity can map each other's files; null when it cannot be read.
     */
    public static String hostIdentity(Path dir) {
        try {
            String boot = Files.readString(Path.of("/proc/sys/kernel/random/boot_id")).trim();
            Object dev = Files.getAttribute(dir, "unix:dev");
            return boot + "/" + dev;
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }
}
