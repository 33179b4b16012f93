package io.tensorbus.spi.support.shm;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.nio.file.Path;
import java.util.HexFormat;

/**
 * The shared memory of all members of a group on one host, for collectives that every member computes a share
 * of in place (DeepSpeed's CPU all-reduce): per member two buffers of {@code sliceBytes} (one is written while the
 * peers still read the other) and a control line that only that member writes. One member creates the file and
 * offers it to the others over an authenticated path; it deletes the file once every member mapped it.
 *
 * <pre>
 *    0 u64 magic 'TBSHMA01'   8 16 bytes nonce   24 u64 members   32 u64 slice bytes
 * 4096 + 2176 m: member m's control: u64 progress, u64 stamps of even and odd steps, then 64 announcements of
 *              32 bytes from byte 128
 *              (u64 sequence, then {@link #ANNOUNCE_WORDS} words of the caller's encoding)
 * then, 4 KiB aligned: member m's buffer b at (2 m + b) slice bytes
 * </pre>
 */
public final class SharedMemoryArea implements AutoCloseable {
    /** The prefix of every area file, followed by the creator's pid. */
    public static final String PREFIX = "tensorbus-area-";
    private static final long MAGIC = 0x3130_414d_4853_4254L; // "TBSHMA01" read little-endian
    private static final long HEADER_BYTES = 4096;
    /** The words of an announcement besides its sequence number. */
    public static final int ANNOUNCE_WORDS = 3;
    private static final int ANNOUNCE_SLOTS = 64;
    private static final long ANNOUNCE_BYTES = 32;
    private static final long PROGRESS = 0;
    private static final long STAMPS = 8;
    private static final long ANNOUNCEMENTS = 128;
    private static final long CONTROL_STRIDE = ANNOUNCEMENTS + ANNOUNCE_SLOTS * ANNOUNCE_BYTES;
    private static final VarHandle LONG = ValueLayout.JAVA_LONG.varHandle();

    private final SharedMemoryFile file;
    private final int members;
    private final long sliceBytes;
    private final long dataStart;

    private SharedMemoryArea(SharedMemoryFile file, int members, long sliceBytes) {
        this.file = file;
        this.members = members;
        this.sliceBytes = sliceBytes;
        this.dataStart = dataStart(members);
    }

    private static long dataStart(int members) {
        return (HEADER_BYTES + members * CONTROL_STRIDE + 4095) & ~4095L;
    }

    /** The bytes an area of {@code members} with slices of {@code sliceBytes} takes in {@code /dev/shm}. */
    public static long fileBytes(int members, long sliceBytes) {
        return dataStart(members) + 2L * members * sliceBytes;
    }

    /**
     * Creates an area's file in {@code dir} for {@code members} (at least 1) with buffers of {@code sliceBytes}
     * (a positive multiple of 4 KiB) and maps it.
     *
     * @throws IllegalArgumentException when a size is out of range
     * @throws IOException when the directory lacks the room or the file cannot be written or mapped
     */
    public static SharedMemoryArea create(Path dir, int members, long sliceBytes) throws IOException {
        if (members < 1 || sliceBytes <= 0 || sliceBytes % 4096 != 0) {
            throw new IllegalArgumentException("members=" + members + ", sliceBytes=" + sliceBytes
                    + ": expected at least one member and a positive multiple of 4096 bytes");
        }
        SharedMemoryFile f = SharedMemoryFile.create(dir, PREFIX, fileBytes(members, sliceBytes));
        f.memory.set(ValueLayout.JAVA_LONG_UNALIGNED, 24, members);
        f.memory.set(ValueLayout.JAVA_LONG_UNALIGNED, 32, sliceBytes);
        f.memory.set(ValueLayout.JAVA_LONG_UNALIGNED, 0, MAGIC);
        return new SharedMemoryArea(f, members, sliceBytes);
    }

    /**
     * Maps the area an {@link #offer} names, which must be made for {@code members}.
     *
     * @throws IOException when the offer is malformed, or the file is missing, of another size or membership,
     *         or does not carry the nonce
     */
    public static SharedMemoryArea accept(Path dir, byte[] offer, int members) throws IOException {
        SharedMemoryFile f = SharedMemoryFile.accept(dir, offer, PREFIX, MAGIC, HEADER_BYTES);
        long theirMembers = f.memory.get(ValueLayout.JAVA_LONG_UNALIGNED, 24);
        long slice = f.memory.get(ValueLayout.JAVA_LONG_UNALIGNED, 32);
        if (theirMembers != members || slice <= 0 || slice % 4096 != 0
                || fileBytes(members, slice) != f.memory.byteSize()) {
            f.unmap();
            throw new IOException(f.file + " is not an area for " + members + " members");
        }
        return new SharedMemoryArea(f, members, slice);
    }

    /** What the creator sends the other members: the file's name, a zero byte, the nonce. */
    public byte[] offer() {
        return file.offer();
    }

    /**
     * What names this area among the process's: its nonce in hex, random and the same for every member that maps it
     * (members that are threads of one process find each other by it).
     */
    public String identity() {
        return HexFormat.of().formatHex(file.nonce);
    }

    /** How many members map this area. */
    public int members() {
        return members;
    }

    /** The size of each buffer, in bytes. */
    public long sliceBytes() {
        return sliceBytes;
    }

    /** Buffer {@code which} (0 or 1) of {@code member}. */
    public MemorySegment buffer(int member, int which) {
        return file.memory.asSlice(dataStart + (2L * member + which) * sliceBytes, sliceBytes);
    }

    /** {@code member}'s progress counter, read with acquire semantics: what it published is visible after. */
    public long progress(int member) {
        return (long) LONG.getAcquire(file.memory, control(member) + PROGRESS);
    }

    /**
     * Publishes this member's progress with release semantics (what it wrote before is visible to the others),
     * stamped with {@code stamp}, what the caller says this step belongs to.
     */
    public void publishProgress(int member, long value, long stamp) {
        LONG.setOpaque(file.memory, control(member) + STAMPS + 8 * (value & 1), stamp);
        LONG.setRelease(file.memory, control(member) + PROGRESS, value);
    }

    /**
     * The stamp {@code member} published with step {@code value}, once its {@link #progress} reached it; valid
     * until it publishes step {@code value + 2}.
     */
    public long stamp(int member, long value) {
        return (long) LONG.getOpaque(file.memory, control(member) + STAMPS + 8 * (value & 1));
    }

    /**
     * Says what this member's operation {@code sequence} is ({@link #ANNOUNCE_WORDS} words), so that the others can
     * check that they call the same. The last 64 announcements are kept; one thread of a member announces.
     */
    public void announce(int member, long sequence, long[] words) {
        if (words.length != ANNOUNCE_WORDS || sequence < 0) {
            throw new IllegalArgumentException(words.length + " words for sequence " + sequence + ": expected "
                    + ANNOUNCE_WORDS + " and a sequence >= 0");
        }
        long slot = slot(member, sequence);
        // A sequence lock: readers that see the same sequence before and after reading the words saw them whole.
        LONG.setVolatile(file.memory, slot, -1L);
        // A volatile store may still be passed by later plain stores on weakly ordered CPUs.
        VarHandle.storeStoreFence();
        for (int i = 0; i < ANNOUNCE_WORDS; i++) {
            LONG.setOpaque(file.memory, slot + 8 + 8L * i, words[i]);
        }
        LONG.setRelease(file.memory, slot, sequence);
    }

    /**
     * What {@code member} announced for operation {@code sequence}, or null when it has not announced it yet (or
     * announced 64 later ones since).
     */
    public long[] announcement(int member, long sequence) {
        long slot = slot(member, sequence);
        if ((long) LONG.getAcquire(file.memory, slot) != sequence) {
            return null;
        }
        long[] words = new long[ANNOUNCE_WORDS];
        for (int i = 0; i < ANNOUNCE_WORDS; i++) {
            words[i] = (long) LONG.getOpaque(file.memory, slot + 8 + 8L * i);
        }
        VarHandle.loadLoadFence();
        return (long) LONG.getVolatile(file.memory, slot) == sequence ? words : null;
    }

    private long slot(int member, long sequence) {
        return control(member) + ANNOUNCEMENTS + (sequence % ANNOUNCE_SLOTS) * ANNOUNCE_BYTES;
    }

    private long control(int member) {
        return HEADER_BYTES + member * CONTROL_STRIDE;
    }

    /** Deletes the file (once every member mapped it, or the offer failed); the mappings stay valid. */
    public void unlink() {
        file.unlink();
    }

    /** Unmaps the memory; a thread that touches the area afterwards gets an {@link IllegalStateException}. */
    @Override
    public void close() {
        file.unmap();
    }
}
