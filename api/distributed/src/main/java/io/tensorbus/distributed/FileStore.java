package io.tensorbus.distributed;

import io.tensorbus.c10d.Store;
import io.tensorbus.distributed.impl.FileStoreLog;
import io.tensorbus.distributed.impl.StoreChecks;
import io.tensorbus.distributed.impl.StoreMeters;
import io.tensorbus.distributed.impl.StoreState;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A {@link Store} in a file that processes on one machine, or on a shared file system, open together, as
 * PyTorch's {@code FileStore} (the {@code file://} init method). The file is an append-only log of set and delete
 * records, every access is under an OS file lock, and each instance replays the records it has not seen yet into
 * its own cache. The record format is documented in {@link FileStoreLog}: an 8-byte header ({@code "TBFS"}, u32
 * version 1) and little-endian records {@code u8 op, u32 keyLength, key, u32 valueLength, value}.
 *
 * <p>Each instance has one daemon thread that does its file I/O, so calls return at once and run in the order they
 * were made. {@link #get}, {@link #multiGet} and {@link #wait} poll the file every 5 ms while some call waits,
 * until the keys are set or the timeout passes ({@link TimeoutException} naming the keys not set).
 *
 * <p>Like PyTorch, every instance counts itself in the file when it opens and when it closes, and the last of
 * {@code worldSize} users to close deletes the file. Those counters are internal keys that {@link #numKeys()}
 * does not count. The constructor and {@link #close()} do file I/O on the caller's thread (a few microseconds
 * unless another process holds the lock).
 */
public final class FileStore implements Store {


    /** Prefix of the counters of users; a NUL keeps it out of the way of user keys. */
    private static final String INTERNAL = "\u0000tensorbus.filestore/";
    private static final String REFCOUNT = INTERNAL + "refcount";
    private static final String CLEANUP = INTERNAL + "cleanup";
    private static final long POLL_MS = 5;
    private static final System.Logger LOG = System.getLogger(FileStore.class.getName());

    private final Path file;
    private final int worldSize;
    private final FileStoreLog log;
    /** What waiting calls wait on: a copy of the log's view, updated after each lock is released. */
    private final StoreState mirror = new StoreState();
    private final HashStore waits;
    private final ScheduledThreadPoolExecutor io;
    private volatile Thread ioThread;
    private volatile boolean closed;

    /**
     * Opens (creating when absent) the store in {@code file} with the {@link Distributed#DEFAULT_TIMEOUT}.
     *
     * @see #FileStore(Path, int, Duration)
     */
    public FileStore(Path file, int worldSize) {
        this(file, worldSize, Distributed.DEFAULT_TIMEOUT);
    }

    /**
     * Opens the store in {@code file}, creating the file when absent, and counts this instance as one of its users.
     *
     * @param file the file all users name; its directory must exist
     * @param worldSize how many users will open the file: the last of them to close deletes it; -1 when unknown
     *                  (the file is then never deleted, as PyTorch)
     * @param timeout how long {@link #get}, {@link #multiGet} and {@link #wait(List)} wait
     * @throws NullPointerException when an argument is null
     * @throws IllegalArgumentException when {@code worldSize} is 0 or below -1, the timeout is not positive, or
     *                                  the directory of {@code file} does not exist
     * @throws UncheckedIOException when the file cannot be created, locked, read or written
     * @throws IllegalStateException when the file exists but is not a well-formed store file
     */
    public FileStore(Path file, int worldSize, Duration timeout) {
        Objects.requireNonNull(file, "file must not be null");
        if (worldSize == 0 || worldSize < -1) {
            throw new IllegalArgumentException("worldSize must be >= 1, or -1 when the number of users is unknown"
                    + " (the file is then never deleted), got " + worldSize);
        }
        this.file = file.toAbsolutePath().normalize();
        this.worldSize = worldSize;
        this.waits = new HashStore(mirror, timeout, "FileStore " + this.file).unmetered();
        Path directory = this.file.getParent();
        if (directory == null || !Files.isDirectory(directory)) {
            throw new IllegalArgumentException("the directory of FileStore file " + this.file + " does not exist");
        }
        this.log = new FileStoreLog(this.file);
        try {
            edit(true, true, edit -> {
                edit.view().add(REFCOUNT, 1);
                edit.written(REFCOUNT);
                return null;
            });
        } catch (IOException e) {
            throw new UncheckedIOException("cannot open FileStore file " + this.file + ": " + e, e);
        }
        this.io = new ScheduledThreadPoolExecutor(1, this::newIoThread);
        io.scheduleWithFixedDelay(this::poll, POLL_MS, POLL_MS, TimeUnit.MILLISECONDS);
    }

    /** The file, absolute. */
    public Path file() {
        return file;
    }

    /** How many users the file expects, or -1 when unknown. */
    public int worldSize() {
        return worldSize;
    }

    /**
     * {@inheritDoc}
     *
     * @throws NullPointerException when {@code key} or {@code value} is null
     */
    @Override
    public Future<Void> set(String key, byte[] value) {
        StoreChecks.key(key);
        byte[] copy = StoreChecks.value("value", value).clone();
        return StoreMeters.timed("file", "set", () -> write(edit -> {
            edit.view().set(key, copy);
            edit.written(key);
            return null;
        }));
    }

    /**
     * {@inheritDoc}
     *
     * @throws NullPointerException when {@code key} is null
     */
    @Override
    public Future<byte[]> get(String key) {
        StoreChecks.key(key);
        return StoreMeters.timed("file", "get", () -> refresh().compose(v -> waits.get(key)));
    }

    /**
     * {@inheritDoc} The future fails with {@link IllegalStateException} when the key holds something else than a
     * decimal counter.
     *
     * @throws NullPointerException when {@code key} is null
     */
    @Override
    public Future<Long> add(String key, long delta) {
        StoreChecks.key(key);
        return StoreMeters.timed("file", "add", () -> write(edit -> {
            long sum = edit.view().add(key, delta);
            edit.written(key);
            return sum;
        }));
    }

    /**
     * {@inheritDoc}
     *
     * @throws NullPointerException when an argument is null
     */
    @Override
    public Future<byte[]> compareSet(String key, byte[] expected, byte[] desired) {
        StoreChecks.key(key);
        byte[] expectedCopy = StoreChecks.value("expected", expected).clone();
        byte[] desiredCopy = StoreChecks.value("desired", desired).clone();
        return StoreMeters.timed("file", "compare_set", () -> write(edit -> {
            byte[] before = edit.view().get(key);
            byte[] result = edit.view().compareSet(key, expectedCopy, desiredCopy);
            if (edit.view().get(key) != before) {
                edit.written(key);
            }
            return result.clone();
        }));
    }

    /**
     * {@inheritDoc}
     *
     * @throws NullPointerException when {@code keys}, one of them or {@code timeout} is null
     * @throws IllegalArgumentException when {@code timeout} is zero or negative
     */
    @Override
    public Future<Void> wait(List<String> keys, Duration timeout) {
        List<String> copy = StoreChecks.keys(keys);
        StoreChecks.timeout(timeout);
        return StoreMeters.timed("file", "wait", () -> refresh().compose(v -> waits.wait(copy, timeout)));
    }

    /**
     * {@inheritDoc}
     *
     * @throws NullPointerException when {@code key} is null
     */
    @Override
    public Future<Boolean> deleteKey(String key) {
        StoreChecks.key(key);
        return StoreMeters.timed("file", "delete", () -> write(edit -> {
            boolean existed = edit.view().delete(key);
            if (existed) {
                edit.written(key);
            }
            return existed;
        }));
    }

    /** The number of keys set by users (the internal counters of users are not counted). */
    @Override
    public Future<Long> numKeys() {
        return StoreMeters.timed("file", "num_keys", () ->
                read(edit -> edit.view().count(key -> !key.startsWith(INTERNAL))));
    }

    /**
     * {@inheritDoc}
     *
     * @throws NullPointerException when {@code keys} or one of them is null
     */
    @Override
    public Future<Boolean> check(List<String> keys) {
        List<String> copy = StoreChecks.keys(keys);
        return StoreMeters.timed("file", "check", () -> read(edit -> edit.view().check(copy)));
    }

    /**
     * {@inheritDoc}
     *
     * @throws NullPointerException when {@code key} or {@code value} is null
     */
    @Override
    public Future<Void> append(String key, byte[] value) {
        StoreChecks.key(key);
        byte[] copy = StoreChecks.value("value", value).clone();
        return StoreMeters.timed("file", "append", () -> write(edit -> {
            edit.view().append(key, copy);
            edit.written(key);
            return null;
        }));
    }

    /**
     * {@inheritDoc}
     *
     * @throws NullPointerException when {@code keys} or one of them is null
     */
    @Override
    public Future<List<byte[]>> multiGet(List<String> keys) {
        List<String> copy = StoreChecks.keys(keys);
        return StoreMeters.timed("file", "multi_get", () -> refresh().compose(v -> waits.multiGet(copy)));
    }

    /**
     * {@inheritDoc}
     *
     * @throws NullPointerException when {@code entries}, a key or a value is null
     */
    @Override
    public Future<Void> multiSet(Map<String, byte[]> entries) {
        Map<String, byte[]> copy = StoreChecks.entries(entries);
        return StoreMeters.timed("file", "multi_set", () -> write(edit -> {
            edit.view().multiSet(copy);
            copy.keySet().forEach(edit::written);
            return null;
        }));
    }

    /** {@inheritDoc} */
    @Override
    public Duration timeout() {
        return waits.timeout();
    }

    /** {@inheritDoc} */
    @Override
    public void setTimeout(Duration timeout) {
        waits.setTimeout(timeout);
    }

    /**
     * Fails the waiting calls, runs the calls already made, counts this user out of the file and deletes the
     * file when it was the last of {@code worldSize} users. Waits for that up to the timeout; a failure is logged
     * (as PyTorch's destructor, close never throws). Idempotent.
     */
    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        waits.close();
        if (Thread.currentThread() == ioThread) {
            // Called from a callback on the I/O thread: waiting for the queue would wait for ourselves.
            release();
            io.shutdown();
            return;
        }
        java.util.concurrent.Future<?> done = io.submit(this::release); // qualified: clashes with Future
        io.shutdown();
        try {
            done.get(StoreChecks.millis(timeout()), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException | TimeoutException e) {
            LOG.log(System.Logger.Level.WARNING, "FileStore " + file + ": closing failed", e);
        }
    }

    /** Counts this user out, deleting the file after the last one; on the I/O thread. */
    private void release() {
        try {
            edit(true, false, edit -> {
                long finished = edit.view().add(CLEANUP, 1);
                long users = edit.view().add(REFCOUNT, -1);
                if (users == 0 && worldSize > 0 && finished >= worldSize) {
                    edit.deleteFile();
                } else {
                    edit.written(CLEANUP);
                    edit.written(REFCOUNT);
                }
                return null;
            });
        } catch (NoSuchFileException gone) {
            // Someone removed the file already (as PyTorch, that is not an error at close).
        } catch (IOException | RuntimeException e) {
            // The message says it all (a malformed file names the byte); a stack trace would add nothing.
            LOG.log(System.Logger.Level.WARNING, "FileStore " + file + ": cannot count this user out: "
                    + e.getMessage());
        }
    }

    /** Replays the file so that the mirror is current, before a call starts waiting on it. */
    private Future<Void> refresh() {
        return read(edit -> null);
    }

    private <T> Future<T> read(FileStoreLog.Action<T> action) {
        return submit(() -> edit(false, false, action));
    }

    private <T> Future<T> write(FileStoreLog.Action<T> action) {
        return submit(() -> edit(true, false, action));
    }

    /** Runs {@code action} under the file's locks, then shows the changed keys to the waiting calls. */
    private <T> T edit(boolean write, boolean create, FileStoreLog.Action<T> action) throws IOException {
        Set<String> changed = new HashSet<>();
        try {
            return log.locked(write, create, changed, action);
        } catch (NoSuchFileException gone) {
            throw new NoSuchFileException(file.toString(), null,
                    "the FileStore file was deleted while this store was open (all users closed it, or someone"
                            + " removed it)");
        } finally {
            // Outside the file lock, so that callbacks of completed waits never run while holding it.
            for (String key : changed) {
                byte[] value = log.view().get(key);
                if (value == null) {
                    mirror.delete(key);
                } else {
                    mirror.set(key, value);
                }
            }
        }
    }

    private <T> Future<T> submit(Callable<T> op) {
        if (closed) {
            return Future.failedFuture(new IllegalStateException("FileStore " + file + " is closed"));
        }
        Promise<T> promise = Promise.promise();
        try {
            io.execute(() -> {
                try {
                    promise.complete(op.call());
                } catch (Exception e) {
                    promise.fail(e);
                }
            });
        } catch (RejectedExecutionException closing) {
            promise.fail(new IllegalStateException("FileStore " + file + " is closed"));
        }
        return promise.future();
    }

    /** While calls wait, replays what other users appended; cheap (one stat) when the file has not grown. */
    private void poll() {
        if (waits.pendingWaits() == 0) {
            return;
        }
        try {
            if (Files.size(file) != log.position()) {
                edit(false, false, edit -> null);
            }
        } catch (IOException | RuntimeException e) {
            waits.failWaits(e instanceof IOException ioe ? new UncheckedIOException(ioe.getMessage(), ioe) : e);
        }
    }

    private Thread newIoThread(Runnable runnable) {
        Thread thread = new Thread(runnable, "tensorbus-filestore " + file.getFileName());
        thread.setDaemon(true);
        ioThread = thread;
        return thread;
    }
}
