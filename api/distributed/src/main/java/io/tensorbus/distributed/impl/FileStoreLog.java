package io.tensorbus.distributed.impl;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.LinkedHashSet;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The file behind a {@code FileStore} and this instance's replay of it: an append-only log read and written only
 * under the file's locks. Not thread-safe: one thread at a time uses an instance (the store's own thread).
 *
 * <p>Format, little-endian: an 8-byte header (the ASCII magic {@code "TBFS"}, then u32 version 1), then records
 * {@code u8 op, u32 keyLength, key (UTF-8), u32 valueLength, value}, where op 1 sets the key to the value and op 2
 * deletes the key (value length 0). Operations that read before they write (add, compareSet, append) replay the
 * log and append the resulting value as a set record under the same exclusive lock, so only these two ops exist.
 *
 * <p>Locks: an OS lock ({@link FileChannel#lock}) orders processes; since the JVM refuses a second overlapping
 * lock of the same file from one process (the two {@code FileStore}s of a test, say), a JVM-wide lock per path is
 * taken first.
 */
public final class FileStoreLog {

    /** {@code "TBFS"} read as a little-endian u32. */
    static final int MAGIC = 0x53464254;
    static final int VERSION = 1;
    static final int HEADER_BYTES = 8;
    static final byte OP_SET = 1;
    static final byte OP_DELETE = 2;

    private static final ConcurrentHashMap<Path, ReentrantLock> JVM_LOCKS = new ConcurrentHashMap<>();

    private final Path path;
    private final StoreState view = new StoreState();
    /** Bytes of the file replayed into {@link #view}. */
    private long position;

    /** The replay of the file at {@code path} (absolute and normalised, so that the JVM-wide lock matches). */
    public FileStoreLog(Path path) {
        this.path = path;
    }

    /** The file. */
    public Path path() {
        return path;
    }

    /** The number of bytes replayed so far; a larger file has records this instance has not seen. */
    public long position() {
        return position;
    }

    /** The replayed keys and values; read it inside {@link #locked} to see the file's current state. */
    public StoreState view() {
        return view;
    }

    /** What an action inside {@link #locked} may do besides reading and changing {@link #view()}. */
    public interface Edit {
        /** The replayed state, up to date with the file. */
        StoreState view();

        /** Writes the view's current state of {@code key} (set or deleted) to the file when the action ends. */
        void written(String key);

        /** Deletes the file when the action ends (the last user closing it), instead of writing anything. */
        void deleteFile();
    }

    /** An action run under the file's locks. */
    @FunctionalInterface
    public interface Action<T> {
        /** Runs with the file's state replayed into {@code edit.view()}. */
        T run(Edit edit) throws IOException;
    }

    /**
     * Takes the locks, replays the records other instances appended, runs {@code action}, appends the records it
     * asked for, releases the locks, and returns the action's result.
     *
     * @param write whether {@code action} may write (takes an exclusive lock; otherwise a shared one)
     * @param create whether to create the file when it does not exist (only when the store opens)
     * @param changed receives every key whose value changed, by other instances or by {@code action}
     * @throws java.nio.file.NoSuchFileException when the file is gone and {@code create} is false
     * @throws IllegalStateException when the file is not a well-formed store log
     */
    public <T> T locked(boolean write, boolean create, Set<String> changed, Action<T> action) throws IOException {
        ReentrantLock jvmLock = JVM_LOCKS.computeIfAbsent(path, p -> new ReentrantLock());
        jvmLock.lock();
        try (FileChannel channel = FileChannel.open(path, options(write, create))) {
            // Closing the channel releases the OS lock too, also when the action throws.
            channel.lock(0, Long.MAX_VALUE, !write);
            if (write && channel.size() == 0) {
                writeFully(channel, header(), 0);
            }
            replay(channel, changed);
            EditImpl edit = new EditImpl();
            T result = action.run(edit);
            if (edit.delete) {
                Files.deleteIfExists(path);
            } else if (!edit.written.isEmpty()) {
                appendRecords(channel, edit.written);
                changed.addAll(edit.written);
            }
            return result;
        } finally {
            jvmLock.unlock();
        }
    }

    private static OpenOption[] options(boolean write, boolean create) {
        if (!write) {
            return new OpenOption[] {StandardOpenOption.READ};
        }
        if (create) {
            return new OpenOption[] {StandardOpenOption.READ, StandardOpenOption.WRITE, StandardOpenOption.CREATE};
        }
        return new OpenOption[] {StandardOpenOption.READ, StandardOpenOption.WRITE};
    }

    /** Reads the bytes after {@link #position} and applies their records to the view. */
    private void replay(FileChannel channel, Set<String> changed) throws IOException {
        long size = channel.size();
        if (size < position) {
            throw malformed(size, "the file shrank from " + position + " to " + size
                    + " bytes: another job truncated or replaced it while this store was open");
        }
        if (size == position) {
            return;
        }
        if (size - position > Integer.MAX_VALUE - 16) {
            throw malformed(position, "the file has " + (size - position) + " unread bytes, more than a store holds");
        }
        ByteBuffer bytes = ByteBuffer.allocate((int) (size - position)).order(ByteOrder.LITTLE_ENDIAN);
        while (bytes.hasRemaining()) {
            if (channel.read(bytes, position + bytes.position()) < 0) {
                throw malformed(position + bytes.position(), "the file ended before its reported size " + size);
            }
        }
        bytes.flip();
        long start = position;
        if (start == 0) {
            checkHeader(bytes);
        }
        // Apply nothing until the whole tail parses: a malformed file then leaves this replay as it was.
        Set<String> seen = new LinkedHashSet<>();
        StoreState parsed = parseRecords(bytes, start, seen);
        for (String key : seen) {
            byte[] value = parsed.get(key);
            if (value == null) {
                view.delete(key);
            } else {
                view.set(key, value);
            }
        }
        changed.addAll(seen);
        position = size;
    }

    private void checkHeader(ByteBuffer bytes) {
        if (bytes.remaining() < HEADER_BYTES) {
            throw malformed(0, "it has " + bytes.remaining() + " bytes, fewer than the 8-byte header");
        }
        int magic = bytes.getInt();
        int version = bytes.getInt();
        if (magic != MAGIC) {
            throw malformed(0, String.format("it does not start with the magic \"TBFS\" (found 0x%08x)", magic));
        }
        if (version != VERSION) {
            throw malformed(4, "its format version is " + version + ", this build reads version " + VERSION);
        }
    }

    /** Parses records into a scratch state (absent = deleted) seeded from the view for the keys touched. */
    private StoreState parseRecords(ByteBuffer bytes, long start, Set<String> seen) {
        StoreState parsed = new StoreState();
        while (bytes.hasRemaining()) {
            long offset = start + bytes.position();
            if (bytes.remaining() < 9) {
                throw malformed(offset, "a record needs at least 9 bytes, only " + bytes.remaining() + " remain");
            }
            byte op = bytes.get();
            String key = readKey(bytes, offset);
            byte[] value = readBytes(bytes, offset, "value");
            if (op == OP_SET) {
                parsed.set(key, value);
            } else if (op == OP_DELETE) {
                if (value.length != 0) {
                    throw malformed(offset, "a delete record carries a " + value.length + "-byte value");
                }
                parsed.delete(key);
            } else {
                throw malformed(offset, "unknown record op " + op + " (1 = set, 2 = delete)");
            }
            seen.add(key);
        }
        return parsed;
    }

    private String readKey(ByteBuffer bytes, long offset) {
        byte[] raw = readBytes(bytes, offset, "key");
        try {
            return StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(raw)).toString();
        } catch (CharacterCodingException e) {
            throw malformed(offset, "a key is not valid UTF-8");
        }
    }

    private byte[] readBytes(ByteBuffer bytes, long offset, String what) {
        if (bytes.remaining() < 4) {
            throw malformed(offset, "the record ends before its " + what + " length");
        }
        long length = Integer.toUnsignedLong(bytes.getInt());
        if (length > bytes.remaining()) {
            throw malformed(offset, "its " + what + " length " + length + " exceeds the " + bytes.remaining()
                    + " bytes left in the file");
        }
        byte[] out = new byte[(int) length];
        bytes.get(out);
        return out;
    }

    private void appendRecords(FileChannel channel, Set<String> keys) throws IOException {
        long size = channel.size();
        ByteBuffer records = encode(keys);
        writeFully(channel, records, size);
        position = size + records.capacity();
    }

    private ByteBuffer encode(Set<String> keys) {
        int total = 0;
        for (String key : keys) {
            byte[] value = view.get(key);
            total += 9 + key.getBytes(StandardCharsets.UTF_8).length + (value == null ? 0 : value.length);
        }
        ByteBuffer out = ByteBuffer.allocate(total).order(ByteOrder.LITTLE_ENDIAN);
        for (String key : keys) {
            byte[] value = view.get(key);
            byte[] keyBytes = key.getBytes(StandardCharsets.UTF_8);
            out.put(value == null ? OP_DELETE : OP_SET);
            out.putInt(keyBytes.length).put(keyBytes);
            byte[] payload = value == null ? new byte[0] : value;
            out.putInt(payload.length).put(payload);
        }
        return out.flip();
    }

    private static ByteBuffer header() {
        return ByteBuffer.allocate(HEADER_BYTES).order(ByteOrder.LITTLE_ENDIAN).putInt(MAGIC).putInt(VERSION).flip();
    }

    private static void writeFully(FileChannel channel, ByteBuffer bytes, long at) throws IOException {
        long offset = at;
        while (bytes.hasRemaining()) {
            offset += channel.write(bytes, offset);
        }
    }

    private IllegalStateException malformed(long offset, String why) {
        return new IllegalStateException("FileStore file " + path + " is malformed at byte " + offset + ": " + why
                + " (is it a tensorbus FileStore file? delete it to start afresh)");
    }

    private final class EditImpl implements Edit {
        final Set<String> written = new LinkedHashSet<>();
        boolean delete;

        @Override
        public StoreState view() {
            return view;
        }

        @Override
        public void written(String key) {
            written.add(key);
        }

        @Override
        public void deleteFile() {
            delete = true;
        }
    }
}
