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
    public static final int NONCE_BYTES = 16;
    private static final long MAGIC = 0x313030_4d48_5342_54L; // "TBSHM001" read little-endian
    private static final long HEADER_BYTES = 4096;
    private static final long CONTROL_0 = 64;
    private static final long CONTROL_1 = CONTROL_0 + SharedMemoryRing.CONTROL_BYTES;
    private static final SecureRandom RANDOM = new SecureRandom();

    private final Path file;
    private final Arena arena;
    private final SharedMemoryRing outgoing;
    private final SharedMemoryRing incoming;
    private final byte[] nonce;
    private boolean unlinked;

    private SharedMemoryChannel(Path file, Arena arena, MemorySegment memory, boolean creator, byte[] nonce) {
        this.file = file;
        this.arena = arena;
        this.nonce = nonce;
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
        long size = fileBytes(ringBytes);
        long free = Files.getFileStore(dir).getUsableSpace();
        if (free < size) {
            throw new IOException(dir + " has " + free + " bytes free, a channel needs " + size);
        }
        byte[] nonce = new byte[NONCE_BYTES];
        RANDOM.nextBytes(nonce);
        Path file = dir.resolve(PREFIX + ProcessHandle.current().pid() + "-" + HexFormat.of().formatHex(nonce, 0, 8));
        Files.createFile(file, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        Arena arena = Arena.ofShared();
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            fill(ch, size);
            MemorySegment memory = ch.map(FileChannel.MapMode.READ_WRITE, 0, size, arena);
            memory.set(ValueLayout.JAVA_LONG_UNALIGNED, 24, ringBytes);
            MemorySegment.copy(nonce, 0, memory, ValueLayout.JAVA_BYTE, 8, NONCE_BYTES);
            memory.set(ValueLayout.JAVA_LONG_UNALIGNED, 0, MAGIC);
            return new SharedMemoryChannel(file, arena, memory, true, nonce);
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
     * Maps the channel file {@code name} in {@code dir} that a peer created and named together with
     * {@code nonce}.
     *
     * @throws IOException when the name is not one this class makes, or the file is missing, of another size,
     *         or does not carry the nonce
     */
    public static SharedMemoryChannel open(Path dir, String name, byte[] nonce) throws IOException {
        if (!name.matches(PREFIX + "[0-9]+-[0-9a-f]{16}") || nonce.length != NONCE_BYTES) {
            throw new IOException("'" + name + "' is not a tensorbus shared-memory channel");
        }
        Path file = dir.resolve(name);
        Arena arena = Arena.ofShared();
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            long size = ch.size();
            MemorySegment memory = ch.map(FileChannel.MapMode.READ_WRITE, 0, size, arena);
            long capacity = size < HEADER_BYTES ? -1 : memory.get(ValueLayout.JAVA_LONG_UNALIGNED, 24);
            byte[] theirs = size < HEADER_BYTES ? new byte[0]
                    : memory.asSlice(8, NONCE_BYTES).toArray(ValueLayout.JAVA_BYTE);
            if (size < HEADER_BYTES || memory.get(ValueLayout.JAVA_LONG_UNALIGNED, 0) != MAGIC
                    || capacity <= 0 || fileBytes(capacity) != size || !MessageDigest.isEqual(theirs, nonce)) {
                throw new IOException(file + " is not the channel that was offered");
            }
            SharedMemoryChannel channel = new SharedMemoryChannel(file, arena, memory, false, nonce);
            // Mapped by both now: the opener deletes it too, so that a creator killed before it hears the answer
            // leaves nothing behind.
            channel.unlink();
            return channel;
        } catch (IOException | RuntimeException e) {
            arena.close();
            throw e instanceof IOException io ? io : new IOException(e.toString(), e);
        }
    }

    /** The file's name (what the creator sends its peer). */
    public String name() {
        return file.getFileName().toString();
    }

    /** What the creator sends its peer: the file's name, a zero byte, the nonce. */
    public byte[] offer() {
        byte[] n = name().getBytes(StandardCharsets.US_ASCII);
        byte[] out = new byte[n.length + 1 + NONCE_BYTES];
        System.arraycopy(n, 0, out, 0, n.length);
        System.arraycopy(nonce, 0, out, n.length + 1, NONCE_BYTES);
        return out;
    }

    /** Maps the channel an {@link #offer} names. */
    public static SharedMemoryChannel accept(Path dir, byte[] offer) throws IOException {
        int zero = 0;
        while (zero < offer.length && offer[zero] != 0) {
            zero++;
        }
        if (zero != offer.length - 1 - NONCE_BYTES) {
            throw new IOException("a malformed shared-memory offer of " + offer.length + " bytes");
        }
        String name = new String(offer, 0, zero, StandardCharsets.US_ASCII);
        return open(dir, name, Arrays.copyOfRange(offer, zero + 1, offer.length));
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
        if (!unlinked) {
            unlinked = true;
            try {
                Files.deleteIfExists(file);
            } catch (IOException e) {
                System.getLogger(SharedMemoryChannel.class.getName()).log(System.Logger.Level.WARNING,
                        "could not delete " + file + ": " + e);
            }
        }
    }

    /** Unmaps the memory; nothing may touch the rings after this. */
    @Override
    public void close() {
        arena.close();
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
