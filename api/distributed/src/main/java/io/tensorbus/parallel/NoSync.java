package io.tensorbus.parallel;

/**
 * The scope returned by {@link DistributedDataParallel#noSync()}: while open, backward passes accumulate
 * gradients locally without communicating. Closing restores the setting that was in force before.
 */
public final class NoSync implements AutoCloseable {
    private final DistributedDataParallel ddp;
    private final boolean previous;
    private boolean closed;

    NoSync(DistributedDataParallel ddp) {
        this.ddp = ddp;
        this.previous = ddp.requiresGradSync();
        ddp.setRequireGradSync(false);
    }

    /** Turns synchronisation back on (idempotent). */
    @Override
    public void close() {
        if (!closed) {
            closed = true;
            ddp.setRequireGradSync(previous);
        }
    }
}
