package io.tensorbus.distributed.checkpoint;

import static io.tensorbus.distributed.checkpoint.Checkpoint.FORMAT_VERSION;
import static io.tensorbus.distributed.checkpoint.Checkpoint.MANIFEST_FILE;
import static io.tensorbus.distributed.checkpoint.Checkpoint.MODEL_FILE;
import static io.tensorbus.distributed.checkpoint.Checkpoint.OPTIMIZER_FILE;

import io.tensorbus.internal.io.Json;
import io.tensorbus.io.SafeTensors;
import io.tensorbus.io.TensorFormatException;
import io.tensorbus.nn.Module;
import io.tensorbus.optim.Optimizer;
import io.tensorbus.optim.OptimizerState;
import io.tensorbus.tensor.Tensor;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * The files of a checkpoint directory and how they are written and read: the model's and the optimizer's
 * safetensors files, each stamped with the checkpoint's id, and the JSON manifest that names the format, its
 * version, the world size, the optimizer's class and parameter groups and the caller's extra entries. Writing
 * goes through an {@link AtomicWriter} with the manifest last; reading checks every file against the manifest
 * before anything of the model or optimizer changes. Blocking file I/O: never on an event loop.
 */
final class CheckpointFormat {
    private static final String FORMAT = "tensorbus-checkpoint";
    private static final String ID_KEY = "tensorbus_checkpoint_id";

    private CheckpointFormat() {
    }

    /** Writes the checkpoint of {@code model} and {@code optimizer} (null: the model only) into {@code dir}. */
    static void write(Path dir, Module model, Optimizer optimizer, Map<String, Object> extra, int worldSize)
            throws IOException {
        String id = UUID.randomUUID().toString();
        Map<String, String> metadata = Map.of("format", "pt", ID_KEY, id);
        OptimizerState state = optimizer == null ? null : optimizer.stateDict();
        byte[] manifest = Json.write(manifest(id, worldSize, optimizer, state, extra))
                .getBytes(StandardCharsets.UTF_8);
        try (AtomicWriter files = new AtomicWriter(dir, id)) {
            files.stage(MODEL_FILE, p -> SafeTensors.save(p, model.stateDict(), metadata));
            if (state != null) {
                files.stage(OPTIMIZER_FILE, p -> SafeTensors.save(p, state.toTensorMap(), metadata));
            }
            files.stage(MANIFEST_FILE, p -> Files.write(p, manifest, StandardOpenOption.CREATE_NEW));
            files.commit();
            if (state == null) {
                // An optimizer file from an earlier save is not part of this checkpoint (its id differs anyway).
                files.delete(OPTIMIZER_FILE);
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

    /** A copy of {@code extra}, refused entry by entry when JSON cannot hold it. */
    static Map<String, Object> checkExtra(Map<String, ?> extra) {
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
                throw new IllegalArgumentException("extra entry '" + key + "' cannot be stored as JSON ("
                        + e.getMessage()
                        + "); allowed: String, finite Number, Boolean, null, and Lists and String-keyed Maps of those",
                        e);
            }
            out.put(key, value);
        });
        return out;
    }

    /**
     * Reads the checkpoint in {@code dir} into {@code model} and {@code optimizer} (null: the model only) and
     * returns its extra entries; nothing changes when a file is missing, malformed or does not fit.
     */
    static Map<String, Object> read(Path dir, Module model, Optimizer optimizer) throws IOException {
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

    private static String quote(Object v) {
        return v instanceof String s ? "\"" + s + "\"" : String.valueOf(v);
    }
}
