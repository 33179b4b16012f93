package io.tensorbus.mutiny;

import io.smallrye.mutiny.Uni;
import io.tensorbus.distributed.ProcessGroup;
import io.tensorbus.distributed.checkpoint.Checkpoint;
import io.tensorbus.nn.Module;
import io.tensorbus.optim.Optimizer;
import java.nio.file.Path;
import java.util.Map;

/**
 * Mutiny's view of {@link Checkpoint}: saving and loading as lazy {@link Uni}s that start the file work when
 * subscribed (every rank of the group subscribes once per checkpoint, as every rank calls {@code saveAsync}).
 * Arguments {@code Checkpoint} refuses fail the {@code Uni} rather than throwing where it is built.
 */
public final class UniCheckpoint {
    private UniCheckpoint() {
    }

    /** {@link Checkpoint#saveAsync(Path, Module, Optimizer, Map, ProcessGroup)}. */
    public static Uni<Void> save(Path dir, Module model, Optimizer optimizer, Map<String, ?> extra,
            ProcessGroup group) {
        return UniProcessGroup.uni(() -> Checkpoint.saveAsync(dir, model, optimizer, extra, group));
    }

    /** {@link Checkpoint#loadAsync(Path, Module, Optimizer, ProcessGroup)}: the extra entries saved with it. */
    public static Uni<Map<String, Object>> load(Path dir, Module model, Optimizer optimizer, ProcessGroup group) {
        return UniProcessGroup.uni(() -> Checkpoint.loadAsync(dir, model, optimizer, group));
    }
}
