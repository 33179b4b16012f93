package io.tensorbus.distributed.checkpoint;

import io.tensorbus.c10d.CommunicationException;
import io.tensorbus.distributed.GroupRank;
import io.tensorbus.distributed.ProcessGroup;
import io.tensorbus.internal.distributed.Blocking;
import io.tensorbus.nn.Module;
import io.tensorbus.optim.Optimizer;
import io.tensorbus.optim.OptimizerState;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * Saving and resuming data-parallel training, as the PyTorch DDP tutorial does it: because every rank starts
 * from the same parameters and applies the same averaged gradients, one copy is enough, so rank 0 writes it
 * and the others wait until it is complete; on resume every rank reads it from a shared file system.
 *
 * <p>A checkpoint is a directory of three files:
 * <ul>
 *   <li>{@value #MODEL_FILE}: {@link Module#stateDict()} (parameters and buffers by dotted name);</li>
 *   <li>{@value #OPTIMIZER_FILE}: {@link OptimizerState#toTensorMap()} (per-parameter state such as
 *       {@code state.0.exp_avg}), absent when no optimizer was saved;</li>
 *   <li>{@value #MANIFEST_FILE}: the format and its version, the world size, the optimizer's class and its
 *       parameter groups' hyper-parameters ({@link OptimizerState#paramGroups()}), and the caller's extra
 *       entries (epoch, step, ...).</li>
 * </ul>
 * The files are written as temporary files, flushed to disk and then moved into place with the manifest last,
 * so a crash never leaves a truncated file under a checkpoint name. Each tensor file records the id of its
 * checkpoint in its safetensors metadata and the manifest holds the same id, so a directory whose save was
 * interrupted between two moves is refused when loaded instead of mixing two checkpoints.
 *
 * <p>The model is saved as given: a model wrapped in {@code DistributedDataParallel} has the keys of the
 * wrapper ({@code module.}-prefixed, as PyTorch), so load into the same kind of wrapper. Tensors are read
 * into host memory (PyTorch's {@code map_location="cpu"}) and copied into the tensors of the given model,
 * on whatever device those live.
 *
 * <pre>{@code
 * if (Checkpoint.exists(dir)) {
 *     Map<String, Object> extra = Checkpoint.load(dir, ddp, optimizer, pg);
 *     startEpoch = ((Number) extra.get("epoch")).intValue() + 1;
 * }
 * ...
 * Checkpoint.save(dir, ddp, optimizer, Map.of("epoch", epoch), pg);
 * }</pre>
 *
 * <p>Every rank of the group must call {@link #save} and {@link #load} (they synchronize the group, in the
 * same order as its other collectives). The blocking forms wait at most the group's timeout (plus a margin) and
 * may not run on a Vert.x event-loop thread. {@link #saveAsync} and {@link #loadAsync} return at once from any
 * thread, event loops included: the files are read and written on a virtual thread of their own, and the
 * future completes on the caller's Vert.x context when it has one.
 *
 * <p>Threads: the blocking forms run their file I/O on the calling thread; the asynchronous forms on a
 * virtual thread named {@code tensorbus-checkpoint-N}. The model and the optimizer must not change until the
 * returned future completes (the save reads them, the load writes them, on that thread), and no other
 * collective may be issued on {@code group} before it completes: the checkpoint's own synchronization is a
 * collective issued when this rank's file I/O ends. To go on training while saving, as PyTorch's
 * {@code async_save} advises, give the checkpoint a group of its own ({@code Distributed.newGroup(pg, ...)}).
 */
public final class Checkpoint {
    /** The name of the model's state-dict file in a checkpoint directory. */
    public static final String MODEL_FILE = "model.safetensors";
    /** The name of the optimizer's state file in a checkpoint directory. */
    public static final String OPTIMIZER_FILE = "optimizer.safetensors";
    /** The name of the manifest (JSON) in a checkpoint directory; written last, it marks a complete save. */
    public static final String MANIFEST_FILE = "checkpoint.json";
    /** The version of the manifest's layout that this class writes and the newest that it reads. */
    public static final int FORMAT_VERSION = 1;

    /** Margin on top of the group's timeout, so that the collective's own, more precise timeout error wins. */
    private static final Duration MARGIN = Duration.ofSeconds(5);
    /** Where the asynchronous forms read and write files: never the caller's thread, never an event loop. */
    private static final ExecutorService IO = Executors.newThreadPerTaskExecutor(
            Thread.ofVirtual().name("tensorbus-checkpoint-", 0).factory());

    private Checkpoint() {
    }

    /**
     * Whether {@code dir} holds a complete checkpoint's manifest: the usual test before resuming.
     *
     * @throws NullPointerException when {@code dir} is null
     */
    public static boolean exists(Path dir) {
        return Files.isRegularFile(Objects.requireNonNull(dir, "dir must not be null").resolve(MANIFEST_FILE));
    }

    // ---------------------------------------------------------------- save

    /**
     * Saves a checkpoint and waits until it is complete: rank 0 (or the only process, when {@code group} is
     * null) writes the files into {@code dir} (created when absent; an earlier checkpoint there is replaced),
     * then every rank waits for rank 0, so that no rank reads the checkpoint before it is written.
     *
     * @param dir the checkpoint directory, on a file system every rank that later loads can read
     * @param model the model whose {@link Module#stateDict()} is saved
     * @param optimizer the optimizer whose state is saved, or null to save the model only
     * @param extra JSON-able entries to store, such as {@code epoch} and {@code step}: String, Number (finite),
     *     Boolean, null, and Lists and Maps (String keys) of those; null for none
     * @param group the group whose rank 0 writes, or null for a single process
     * @throws IOException when rank 0 could not write the files; on other ranks, an IOException that quotes
     *     rank 0's error
     * @throws IllegalArgumentException when an argument is invalid (an extra value that JSON cannot hold, a
     *     process outside {@code group})
     * @throws IllegalStateException on a Vert.x event-loop thread
     * @throws CommunicationException when the group fails or times out while synchronizing
     */
    public static void save(Path dir, Module model, Optimizer optimizer, Map<String, ?> extra, ProcessGroup group)
            throws IOException {
        checkNotOnEventLoop("Checkpoint.save");
        checkCommon(dir, model, group, "Checkpoint.save");
        Map<String, Object> checkedExtra = CheckpointFormat.checkExtra(extra);
        awaitIo(shareRankZeroOutcome(dir, group, writeIfRankZero(dir, model, optimizer, checkedExtra, group)), group,
                "Checkpoint.save to " + dir);
    }

    /**
     * {@link #save} without blocking: returns at once with a future that completes once rank 0 has written the
     * files (on a virtual thread) and the group has synchronized; it fails on every rank when rank 0 could not
     * write. See the class comment for what must wait until it completes.
     *
     * @throws IllegalArgumentException when an argument is invalid, as {@link #save}
     */
    public static Future<Void> saveAsync(Path dir, Module model, Optimizer optimizer, Map<String, ?> extra,
                                         ProcessGroup group) {
        checkCommon(dir, model, group, "Checkpoint.save");
        Map<String, Object> checkedExtra = CheckpointFormat.checkExtra(extra);
        return onIoThread(() -> writeIfRankZero(dir, model, optimizer, checkedExtra, group))
                .compose(failure -> shareRankZeroOutcome(dir, group, failure));
    }

    /** Rank 0 (or the only process) writes; returns what went wrong, or null. */
    private static Throwable writeIfRankZero(Path dir, Module model, Optimizer optimizer, Map<String, Object> extra,
                                             ProcessGroup group) {
        if (group != null && group.rank() != 0) {
            return null;
        }
        try {
            CheckpointFormat.write(dir, model, optimizer, extra, group == null ? 1 : group.size());
            return null;
        } catch (IOException | RuntimeException e) {
            return e;
        }
    }

    /**
     * Rank 0 tells every rank whether it wrote the checkpoint. The broadcast is the barrier of the PyTorch
     * tutorial (nobody passes it before rank 0 has written) and, unlike a bare barrier, it lets the other
     * ranks fail at once with rank 0's error instead of going on without a checkpoint.
     */
    private static Future<Void> shareRankZeroOutcome(Path dir, ProcessGroup group, Throwable mine) {
        if (group == null) {
            return mine == null ? Future.succeededFuture() : Future.failedFuture(mine);
        }
        List<Object> outcome = new ArrayList<>(List.of(mine == null ? "" : describe(mine)));
        return group.broadcastObjectList(outcome, GroupRank.of(0)).transform(ar -> {
            if (mine != null || ar.failed()) {
                // Rank 0's own write error matters more than a synchronization error after it.
                return Future.failedFuture(mine != null ? mine : ar.cause());
            }
            String remote = String.valueOf(ar.result().get(0));
            return remote.isEmpty() ? Future.succeededFuture() : Future.failedFuture(new IOException(
                    "rank 0 could not write the checkpoint " + dir + ": " + remote));
        });
    }

    // ---------------------------------------------------------------- load

    /**
     * Loads a checkpoint on every rank: each reads the files from {@code dir} and copies them into
     * {@code model} (strict: the keys must match exactly) and, when given, {@code optimizer}; then the ranks
     * synchronize, so that all of them have finished reading before any goes on (and could overwrite the
     * checkpoint), and so that all fail when one does. Nothing of {@code model} or {@code optimizer} changes
     * on a rank whose load fails.
     *
     * @param dir a checkpoint directory written by {@link #save}
     * @param model the model to load into; the same architecture (and wrapper) as the saved one
     * @param optimizer the optimizer to load into (the saved optimizer's class, over the same parameters), or
     *     null to load the model only
     * @param group the group whose ranks all load, or null for a single process
     * @return the extra entries given to {@link #save}, in their order (as JSON reads them: integers as Long,
     *     other numbers as Double, lists as List, objects as Map)
     * @throws IOException naming the file when one is missing, unreadable or malformed (bad JSON, a newer format
     *     version, a tensor file of another checkpoint); on the other ranks, an IOException naming the ranks
     *     that failed and their errors
     * @throws IllegalArgumentException naming the file when its content does not fit {@code model} or
     *     {@code optimizer} (missing or unexpected keys, shapes, another optimizer class, no optimizer state)
     * @throws IllegalStateException on a Vert.x event-loop thread
     * @throws CommunicationException when the group fails or times out while synchronizing
     */
    public static Map<String, Object> load(Path dir, Module model, Optimizer optimizer, ProcessGroup group)
            throws IOException {
        checkNotOnEventLoop("Checkpoint.load");
        checkCommon(dir, model, group, "Checkpoint.load");
        return awaitIo(shareLoadOutcomes(dir, group, readHere(dir, model, optimizer)), group,
                "Checkpoint.load from " + dir);
    }

    /**
     * {@link #load} without blocking: returns at once with a future of the extra entries that completes once
     * this rank has read the files (on a virtual thread) and every rank has read, or fails when any rank failed.
     * See the class comment for what must wait until it completes.
     *
     * @throws IllegalArgumentException when {@code dir} or {@code model} is null or this process is not a
     *     member of {@code group}
     */
    public static Future<Map<String, Object>> loadAsync(Path dir, Module model, Optimizer optimizer,
                                                        ProcessGroup group) {
        checkCommon(dir, model, group, "Checkpoint.load");
        return onIoThread(() -> readHere(dir, model, optimizer))
                .compose(outcome -> shareLoadOutcomes(dir, group, outcome));
    }

    /** This rank's read: the extra entries, or what went wrong. */
    private record Outcome(Map<String, Object> extra, Throwable failure) {
    }

    private static Outcome readHere(Path dir, Module model, Optimizer optimizer) {
        try {
            return new Outcome(CheckpointFormat.read(dir, model, optimizer), null);
        } catch (IOException | RuntimeException e) {
            return new Outcome(null, e);
        }
    }

    /** Every rank learns whether every other rank loaded, so that none trains on alone (and hangs later). */
    private static Future<Map<String, Object>> shareLoadOutcomes(Path dir, ProcessGroup group, Outcome outcome) {
        Map<String, Object> extra = outcome.extra();
        Throwable mine = outcome.failure();
        if (group == null) {
            return mine == null ? Future.succeededFuture(extra) : Future.failedFuture(mine);
        }
        return group.allGatherObject(mine == null ? "" : describe(mine)).transform(ar -> {
            if (mine != null || ar.failed()) {
                // This rank's own read error matters more than a synchronization error after it.
                return Future.failedFuture(mine != null ? mine : ar.cause());
            }
            List<Object> all = ar.result();
            List<String> failed = new ArrayList<>();
            for (int r = 0; r < all.size(); r++) {
                String theirs = String.valueOf(all.get(r));
                if (!theirs.isEmpty()) {
                    failed.add("rank " + r + ": " + theirs);
                }
            }
            return failed.isEmpty() ? Future.succeededFuture(extra) : Future.failedFuture(new IOException(
                    "checkpoint " + dir + " could not be loaded on every rank; " + String.join("; ", failed)));
        });
    }

    // ---------------------------------------------------------------- shared

    private static void checkCommon(Path dir, Module model, ProcessGroup group, String what) {
        if (dir == null) {
            throw new IllegalArgumentException(what + ": dir must not be null");
        }
        if (model == null) {
            throw new IllegalArgumentException(what + ": model must not be null");
        }
        if (group != null && !group.isMember()) {
            throw new IllegalArgumentException(what + ": this process is not a member of group '" + group.name()
                    + "'; pass a group it belongs to, or null for a single process");
        }
    }

    private static void checkNotOnEventLoop(String what) {
        if (Context.isOnEventLoopThread()) {
            throw new IllegalStateException(what + " reads and writes files, and this is a Vert.x event-loop thread,"
                    + " which must never block: call it from a worker, a virtual thread or the training thread, or"
                    + " use the Async form");
        }
    }

    /**
     * Runs {@code task} on a checkpoint I/O thread; the future completes on the caller's Vert.x context when it
     * has one (so its continuations stay on that context), else on the I/O thread.
     */
    private static <T> Future<T> onIoThread(Callable<T> task) {
        Context caller = Vertx.currentContext();
        Promise<T> promise = Promise.promise();
        IO.execute(() -> {
            T value;
            try {
                value = task.call();
            } catch (Throwable t) {
                completeOn(caller, () -> promise.fail(t));
                return;
            }
            completeOn(caller, () -> promise.complete(value));
        });
        return promise.future();
    }

    private static void completeOn(Context context, Runnable completion) {
        if (context == null) {
            completion.run();
        } else {
            context.runOnContext(v -> completion.run());
        }
    }

    /**
     * Waits for a future of this class and rethrows its failure as it was: an IOException stays an IOException
     * (the plain {@link Blocking#await} would wrap it, being checked).
     */
    private static <T> T awaitIo(Future<T> future, ProcessGroup group, String what) throws IOException {
        if (future.isComplete()) {
            // Always the case without a group: there is nothing to wait for.
            if (future.succeeded()) {
                return future.result();
            }
            throw rethrow(future.cause(), what);
        }
        try {
            return Blocking.await(future, group.timeout().plus(MARGIN), what);
        } catch (CommunicationException e) {
            if (e.getCause() instanceof IOException io) {
                throw io;
            }
            throw e;
        }
    }

    private static RuntimeException rethrow(Throwable t, String what) throws IOException {
        if (t instanceof IOException io) {
            throw io;
        }
        if (t instanceof RuntimeException re) {
            throw re;
        }
        if (t instanceof Error err) {
            throw err;
        }
        return new IllegalStateException(what + " failed: " + t, t);
    }

    private static String describe(Throwable t) {
        return t.getClass().getSimpleName() + ": " + t.getMessage();
    }

}
