package io.tensorbus.parallel;

import io.tensorbus.spi.ReduceOp;
import io.tensorbus.tensor.Tensor;

/**
 * The join context for uneven inputs (PyTorch's {@code torch.distributed.algorithms.Join} with DDP as its
 * joinable), returned by {@link DistributedDataParallel#join()}. While it is open, each synchronised
 * forward first all-reduces a "still training" flag; {@link #close()} keeps answering those all-reduces
 * with zero, and shadows the gradient reduction of the ranks still training with zero gradients, until all
 * ranks have closed their context. Then the parameters and buffers of the last rank to join are broadcast,
 * because the ranks that joined early missed the later optimizer steps.
 */
public final class Join implements AutoCloseable {
    private final DistributedDataParallel ddp;
    private boolean closing;
    private boolean closed;

    Join(DistributedDataParallel ddp) {
        this.ddp = ddp;
    }

    /** Called by a synchronised forward of a rank that still has data. */
    void notifyActive() {
        allReduceFlag(1);
    }

    boolean isClosing() {
        return closing;
    }

    /**
     * Shadows the other ranks until every rank has joined, then synchronises the final model. Blocks;
     * idempotent.
     *
     * @throws io.tensorbus.spi.CommunicationException when the group fails or times out
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        closing = true;
        try {
            boolean lastJoiner = true;
            while (allReduceFlag(0) > 0) {
                lastJoiner = false;
                shadowIteration();
            }
            int src = ddp.commonRank(lastJoiner);
            ddp.syncState(src);
        } finally {
            ddp.leaveJoin();
        }
    }

    private void shadowIteration() {
        if (ddp.isTraining() && ddp.broadcastsBuffers()) {
            ddp.syncBuffers(true);
        }
        if (ddp.requiresGradSync()) {
            ddp.reducer().shadowBackward();
        }
    }

    private long allReduceFlag(int value) {
        Tensor t = Tensor.of(new int[] {value}, 1);
        ddp.await(ddp.processGroup().allReduce(t, ReduceOp.SUM), "the join context's count of ranks still training");
        return t.getLong(0);
    }
}
