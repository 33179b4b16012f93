package io.tensorbus.parallel;

import io.tensorbus.c10d.CommunicationException;
import io.tensorbus.distributed.ProcessGroup;
import io.tensorbus.internal.distributed.Blocking;
import io.tensorbus.internal.io.Json;
import io.tensorbus.io.SafeTensors;
import io.tensorbus.io.TensorFormatException;
import io.tensorbus.nn.Module;
import io.tensorbus.optim.Optimizer;
import io.tensorbus.optim.OptimizerState;
import io.tensorbus.tensor.Tensor;
import io.vertx.core.Context;
import io.vertx.core.Future;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;

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
 * same order as its other collectives). The blocking forms wait at most the group's timeout (plus a margin);
 * none of them may run on a Vert.x event-loop thread, because they read and write files.
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

    private static final String FORMAT = "tensorbus-checkpoint";
    private static final String ID_KEY = "tensorbus_checkpoint_id";
    /** Margin on top of the group's timeout, so that the collective's own, more precise timeout error wins. */
    private static final Duration MARGIN = Duration.ofSeconds(5);

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
        awaitIo(saveAsync(dir, model, optimizer, extra, group), group, "Checkpoint.save to " + dir);
    }

    /**
     * {@link #save}, returning once rank 0 has written the files (the writing happens in this call, on the
     * calling thread) with a future that completes when the group has synchronized: it fails on every rank
     * when rank 0 could not write.
     *
     * @throws IllegalArgumentException when an argument is invalid, as {@link #save}
     * @throws IllegalStateException on a Vert.x event-loop thread, which must not do file I/O
     */
    public static Future<Void> saveAsync(Path dir, Module model, Optimizer optimizer, Map<String, ?> extra,
                                         ProcessGroup group) {
        checkCommon(dir, model, group, "Checkpoint.save");
        Map<String, Object> checkedExtra = checkExtra(extra);
        Throwable failure = null;
        if (group == null || group.rank() == 0) {
            try {
                write(dir, model, optimizer, checkedExtra, group == null ? 1 : group.size());
            } catch (IOException | RuntimeException e) {
                failure = e;
            }
        }
        if (group == null) {
            return failure == null ? Future.succeededFuture() : Future.failedFuture(failure);
        }
        return shareRankZeroOutcome(dir, group, failure);
    }

    /**
     * Rank 0 tells every rank whether it wrote the checkpoint. The broadcast is the barrier of the PyTorch
     * tutorial (nobody passes it before rank 0 has written) and, unlike a bare barrier, it lets the other
     * ranks fail at once with rank 0's error instead of going on without a checkpoint.
     */
    private static Future<Void> shareRankZeroOutcome(Path dir, ProcessGroup group, Throwable mine) {
        List<Object> outcome = new ArrayList<>(List.of(mine == null ? "" : describe(mine)));
        return group.broadcastObjectList(outcome, 0).transform(ar -> {
            if (mine != null || ar.failed()) {
                // Rank 0's own write error matters more than a synchronization error after it.
                return Future.failedFuture(mine != null ? mine : ar.cause());
            }
            String remote = String.valueOf(ar.result().get(0));
            return remote.isEmpty() ? Future.succeededFuture() : Future.failedFuture(new IOException(
                    "rank 0 could not write the checkpoint " + dir + ": " + remote));
        });
    }

    private static void write(Path dir, Module model, Optimizer optimizer, Map<String, Object> extra,
                              int worldSize) throws IOException {
        Files.createDirectories(dir);
        String id = UUID.randomUUID().toString();
        Map<String, String> metadata = Map.of("format", "pt", ID_KEY, id);
        OptimizerState state = optimizer == null ? null : optimizer.stateDict();
        byte[] manifest = Json.write(manifest(id, worldSize, optimizer, state, extra))
                .getBytes(StandardCharsets.UTF_8);
        List<Path[]> moves = new ArrayList<>();
        try {
            moves.add(stage(dir, MODEL_FILE, id, p -> SafeTensors.save(p, model.stateDict(), metadata)));
            if (state != null) {
                moves.add(stage(dir, OPTIMIZER_FILE, id, p -> SafeTensors.save(p, state.toTensorMap(), metadata)));
            }
            moves.add(stage(dir, MANIFEST_FILE, id, p -> Files.write(p, manifest, StandardOpenOption.CREATE_NEW)));
            // Commit: every staged file is complete and on disk; the manifest moves last.
            for (Path[] m : moves) {
                move(m[0], m[1]);
            }
            if (state == null) {
                // An optimizer file from an earlier save is not part of this checkpoint (its id differs anyway).
                Files.deleteIfExists(dir.resolve(OPTIMIZER_FILE));
            }
            syncDirectory(dir);
        } finally {
            for (Path[] m : moves) {
                Files.deleteIfExists(m[0]);
            }
        }
    }

    private static Map<String, Object> manifest(String id, int worldSize, Optimizer optimizer, OptimizerState state,
                                                Map<String, Object> extra) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("format", FORMAT);
        m.put("format_version", FORMAT_VERSION);
        m.put("id", id);
        m.put("world_size", worldSize);
        m.put("model", Map.of("file", MODEL_FILE));
        if (state == null) {
            m.put("optimizer", null);
        } else {
            Map<String, Object> o = new LinkedHashMap<>();
            o.put("file", OPTIMIZER_FILE);
            o.put("class", optimizer.getClass().getName());
            o.put("param_groups", state.paramGroups());
            m.put("optimizer", o);
        }
        m.put("extra", extra);
        return m;
    }

    /** Writes one file of a checkpoint. */
    @FunctionalInterface
    private interface FileWriter {
        void writeTo(Path file) throws IOException;
    }

    /** Writes {@code name}'s content to a hidden temporary file in {@code dir} and flushes it to disk. */
    private static Path[] stage(Path dir, String name, String id, FileWriter writer) throws IOException {
        Path tmp = dir.resolve("." + name + "." + id + ".tmp");
        writer.writeTo(tmp);
        try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.WRITE)) {
            // Without this, a power loss after the rename may leave a renamed but empty file.
            ch.force(true);
        }
        return new Path[] {tmp, dir.resolve(name)};
    }

    private static void move(Path from, Path to) throws IOException {
        try {
            Files.move(from, to, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (AtomicMoveNotSupportedException e) {
            Files.move(from, to, StandardCopyOption.REPLACE_EXISTING);
        }
    }

    /** Makes the renames durable where the platform allows syncing a directory (Linux does; some do not). */
    private static void syncDirectory(Path dir) {
        try (FileChannel ch = FileChannel.open(dir, StandardOpenOption.READ)) {
            ch.force(true);
        } catch (IOException | UnsupportedOperationException e) {
            // Best effort: the files themselves are already on disk.
        }
    }

    /** A copy of {@code extra}, refused entry by entry when JSON cannot hold it. */
    private static Map<String, Object> checkExtra(Map<String, ?> extra) {
        Map<String, Object> out = new LinkedHashMap<>();
        if (extra == null) {
            return out;
        }
        extra.forEach((key, value) -> {
            if (key == null) {
                throw new IllegalArgumentException("extra has a null key; keys must be non-null Strings");
            }
            try {
                Json.write(value);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("extra entry '" + key + "' cannot be stored as JSON (" + e.getMessage()
                        + "); allowed: String, finite Number, Boolean, null, and Lists and String-keyed Maps of those",
                        e);
            }
            out.put(key, value);
        });
        return out;
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
        return awaitIo(loadAsync(dir, model, optimizer, group), group, "Checkpoint.load from " + dir);
    }

    /**
     * {@link #load}, returning once this rank has read the files (in this call, on the calling thread) with a
     * future of the extra entries that completes when every rank has read, or fails when any rank failed.
     *
     * @throws IllegalArgumentException when {@code dir} or {@code model} is null or this process is not a
     *     member of {@code group}
     * @throws IllegalStateException on a Vert.x event-loop thread, which must not do file I/O
     */
    public static Future<Map<String, Object>> loadAsync(Path dir, Module model, Optimizer optimizer,
                                                        ProcessGroup group) {
        checkCommon(dir, model, group, "Checkpoint.load");
        Map<String, Object> extra = null;
        Throwable failure = null;
        try {
            extra = read(dir, model, optimizer);
        } catch (IOException | RuntimeException e) {
            failure = e;
        }
        if (group == null) {
            return failure == null ? Future.succeededFuture(extra) : Future.failedFuture(failure);
        }
        return shareLoadOutcomes(dir, group, extra, failure);
    }

    /** Every rank learns whether every other rank loaded, so that none trains on alone (and hangs later). */
    private static Future<Map<String, Object>> shareLoadOutcomes(Path dir, ProcessGroup group,
                                                                 Map<String, Object> extra, Throwable mine) {
        return group.allGatherObject(mine == null ? "" : describe(mine)).transform(ar -> {
            if (mine != null || ar.failed()) {
                // This rank's own read error matters more than a synchronization error after it.
                return Future.failedFuture(mine != null ? mine : ar.cause());
            }
            List<Object> all = ar.result();
            List<String> failed = new ArrayList<>();
            for (int r = 0; r < all.size(); r++) {
                String outcome = String.valueOf(all.get(r));
                if (!outcome.isEmpty()) {
                    failed.add("rank " + r + ": " + outcome);
                }
            }
            return failed.isEmpty() ? Future.succeededFuture(extra) : Future.failedFuture(new IOException(
                    "checkpoint " + dir + " could not be loaded on every rank; " + String.join("; ", failed)));
        });
    }

    private static Map<String, Object> read(Path dir, Module model, Optimizer optimizer) throws IOException {
        Path manifestFile = dir.resolve(MANIFEST_FILE);
        Map<String, Object> manifest = readManifest(manifestFile);
        String id = (String) manifest.get("id");
        Path modelFile = dir.resolve(MODEL_FILE);
        Map<String, Tensor> modelState = readTensors(modelFile, id);
        OptimizerState optimizerState = optimizer == null ? null
                : readOptimizerState(dir, manifestFile, manifest, id, optimizer);
        // Everything is read and parsed; now apply, the model first (it checks keys and shapes before copying).
        Map<String, Tensor> backup = optimizerState == null ? null : snapshot(model);
        try {
            model.loadStateDict(modelState, true);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(modelFile + ": " + e.getMessage(), e);
        }
        if (optimizerState != null) {
            loadOptimizer(dir, model, backup, optimizer, optimizerState);
        }
        return Collections.unmodifiableMap(extraOf(manifestFile, manifest));
    }

    private static Map<String, Tensor> snapshot(Module model) {
        Map<String, Tensor> copy = new LinkedHashMap<>();
        model.stateDict().forEach((k, t) -> copy.put(k, t.detach().clone()));
        return copy;
    }

    /** Loads the optimizer; when it refuses the state, puts the model back as it was before the load. */
    private static void loadOptimizer(Path dir, Module model, Map<String, Tensor> backup, Optimizer optimizer,
                                      OptimizerState state) {
        try {
            optimizer.loadStateDict(state);
        } catch (IllegalArgumentException e) {
            model.loadStateDict(backup, true);
            throw new IllegalArgumentException(dir.resolve(OPTIMIZER_FILE) + " with the param_groups of "
                    + dir.resolve(MANIFEST_FILE) + " does not fit this optimizer: " + e.getMessage(), e);
        }
    }

    private static Map<String, Object> readManifest(Path file) throws IOException {
        String text = new String(readFile(file, "the manifest"), StandardCharsets.UTF_8);
        if (!(Json.parse(text, file.toString()) instanceof Map<?, ?> raw)) {
            throw new TensorFormatException(file.toString(), "the manifest must be a JSON object");
        }
        @SuppressWarnings("unchecked")
        Map<String, Object> m = (Map<String, Object>) raw;
        if (!FORMAT.equals(m.get("format"))) {
            throw new TensorFormatException(file.toString(), "\"format\" is " + quote(m.get("format"))
                    + "; a tensorbus checkpoint manifest has \"format\": \"" + FORMAT + "\"");
        }
        if (!(m.get("format_version") instanceof Long v) || v < 1 || v > FORMAT_VERSION) {
            throw new TensorFormatException(file.toString(), "\"format_version\" is " + quote(m.get("format_version"))
                    + "; this version of tensorbus reads format versions 1 to " + FORMAT_VERSION);
        }
        if (!(m.get("id") instanceof String id) || id.isEmpty()) {
            throw new TensorFormatException(file.toString(), "\"id\" must be a non-empty string, got "
                    + quote(m.get("id")));
        }
        return m;
    }

    private static byte[] readFile(Path file, String what) throws IOException {
        try {
            return Files.readAllBytes(file);
        } catch (NoSuchFileException e) {
            throw missing(file, what, e);
        }
    }

    private static NoSuchFileException missing(Path file, String what, NoSuchFileException cause) {
        NoSuchFileException e = new NoSuchFileException(file.toString(), null, what + " of the checkpoint is missing;"
                + " a directory written by Checkpoint.save holds " + MANIFEST_FILE + ", " + MODEL_FILE + " and, with"
                + " an optimizer, " + OPTIMIZER_FILE);
        e.initCause(cause);
        return e;
    }

    /** Reads a tensor file of the checkpoint whose manifest has {@code id}, refusing a file of another one. */
    private static Map<String, Tensor> readTensors(Path file, String id) throws IOException {
        Map<String, String> metadata;
        Map<String, Tensor> tensors;
        try {
            metadata = SafeTensors.metadata(file);
            tensors = SafeTensors.load(file);
        } catch (NoSuchFileException e) {
            throw missing(file, "a tensor file", e);
        }
        String fileId = metadata.get(ID_KEY);
        if (!id.equals(fileId)) {
            throw new TensorFormatException(file.toString(), "belongs to checkpoint " + quote(fileId) + " but "
                    + MANIFEST_FILE + " is checkpoint \"" + id + "\": a save was interrupted, or files of different"
                    + " checkpoints were mixed; save again or restore a complete checkpoint");
        }
        return tensors;
    }

    private static OptimizerState readOptimizerState(Path dir, Path manifestFile, Map<String, Object> manifest,
                                                     String id, Optimizer optimizer) throws IOException {
        if (manifest.get("optimizer") == null) {
            throw new IllegalArgumentException(manifestFile + ": this checkpoint has no optimizer state (it was saved"
                    + " with optimizer null); pass a null optimizer to load the model only");
        }
        if (!(manifest.get("optimizer") instanceof Map<?, ?> o)) {
            throw new TensorFormatException(manifestFile.toString(), "\"optimizer\" must be an object or null");
        }
        if (!optimizer.getClass().getName().equals(o.get("class"))) {
            throw new IllegalArgumentException(manifestFile + ": the checkpoint holds the state of a " + o.get("class")
                    + " but the optimizer to load into is a " + optimizer.getClass().getName());
        }
        List<Map<String, Object>> groups = paramGroups(manifestFile, o.get("param_groups"));
        Path file = dir.resolve(OPTIMIZER_FILE);
        Map<String, Tensor> tensors = readTensors(file, id);
        try {
            return OptimizerState.fromFlat(tensors, groups);
        } catch (IllegalArgumentException e) {
            throw new TensorFormatException(file + " / " + manifestFile, "malformed optimizer state: "
                    + e.getMessage(), e);
        }
    }

    @SuppressWarnings("unchecked")
    private static List<Map<String, Object>> paramGroups(Path manifestFile, Object value) throws TensorFormatException {
        if (!(value instanceof List<?> list) || list.stream().anyMatch(g -> !(g instanceof Map))) {
            throw new TensorFormatException(manifestFile.toString(), "\"optimizer\".\"param_groups\" must be a list"
                    + " of objects, got " + quote(value));
        }
        return (List<Map<String, Object>>) list;
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> extraOf(Path manifestFile, Map<String, Object> manifest)
            throws TensorFormatException {
        Object extra = manifest.get("extra");
        if (extra == null) {
            return new LinkedHashMap<>();
        }
        if (!(extra instanceof Map<?, ?>)) {
            throw new TensorFormatException(manifestFile.toString(), "\"extra\" must be an object, got "
                    + quote(extra));
        }
        return (Map<String, Object>) extra;
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
        if (Context.isOnEventLoopThread()) {
            throw new IllegalStateException(what + " reads and writes files, and this is a Vert.x event-loop thread,"
                    + " which must never block: call it from a worker, a virtual thread or the training thread");
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

    private static String quote(Object v) {
        return v instanceof String s ? "\"" + s + "\"" : String.valueOf(v);
    }
}
