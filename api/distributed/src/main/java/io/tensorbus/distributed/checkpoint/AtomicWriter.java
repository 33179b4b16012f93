package io.tensorbus.distributed.checkpoint;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;

/**
 * Replaces files of a directory so that a crash never leaves a truncated file under a final name: each file is
 * written to a hidden temporary file and flushed to disk ({@link #stage}), then {@link #commit} renames them
 * into place in the order they were staged (the last one marks the set complete) and syncs the directory.
 * Closing deletes whatever temporary file is left. Blocking file I/O: never on an event loop.
 */
final class AtomicWriter implements AutoCloseable {
    /** Writes one file's content. */
    @FunctionalInterface
    interface Content {
        void writeTo(Path file) throws IOException;
    }

    private final Path dir;
    private final String id;
    private final List<Path[]> staged = new ArrayList<>();

    /**
     * @param dir the directory, created when absent
     * @param id unique to this write, so that temporary files of concurrent or crashed writes never collide
     */
    AtomicWriter(Path dir, String id) throws IOException {
        this.dir = Files.createDirectories(dir);
        this.id = id;
    }

    /** Writes {@code name}'s content to a temporary file in the directory and flushes it to disk. */
    void stage(String name, Content content) throws IOException {
        Path tmp = dir.resolve("." + name + "." + id + ".tmp");
        staged.add(new Path[] {tmp, dir.resolve(name)});
        content.writeTo(tmp);
        try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.WRITE)) {
            // Without this, a power loss after the rename may leave a renamed but empty file.
            ch.force(true);
        }
    }

    /** Renames every staged file into place, in staging order, then makes the renames durable. */
    void commit() throws IOException {
        for (Path[] s : staged) {
            move(s[0], s[1]);
        }
        syncDirectory();
    }

    /** Deletes {@code name} from the directory when it is there (a file the new set no longer has). */
    void delete(String name) throws IOException {
        Files.deleteIfExists(dir.resolve(name));
    }

    @Override
    public void close() throws IOException {
        for (Path[] s : staged) {
            Files.deleteIfExists(s[0]);
        }
    }

    private static void move(Path from, Path to) throws IOException {
        try {
            Files.move(from, to, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (AtomicMoveNotSupportedException e) {
            Files.move(from, to, StandardCopyOption.REPLACE_EXISTING);
        }
    }

    /** Where the platform allows syncing a directory (Linux does; some do not). */
    private void syncDirectory() {
        try (FileChannel ch = FileChannel.open(dir, StandardOpenOption.READ)) {
            ch.force(true);
        } catch (IOException | UnsupportedOperationException e) {
            // Best effort: the files themselves are already on disk.
        }
    }
}
