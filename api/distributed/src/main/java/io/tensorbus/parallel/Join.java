package io.tensorbus.parallel;

import io.tensorbus.c10d.ReduceOp;
import io.tensorbus.tensor.Tensor;

/**
 * The join context for uneven inputs (PyTorch's {@code torch.distributed.algorithms.Join} with DDP as its
 * joinable), returned by {@link DistributedDataParallel#join()}. While it is open, every forward first
 * all-reduces three counts: ranks still training, and of those, ranks whose backward will average gradients
 * and ranks that broadcast buffers first. {@link #close()} keeps answering with zeros and, as those counts
 * say, joins the buffer broadcast and shadows the gradient reduction with zero gradients, until all ranks
 * have closed their context. Then the parameters and buffers of the last rank to join are broadcast,
 * because the ranks that joined early missed the later optimizer steps.
 */
public final class Join implements AutoCloseable {
    private final DistributedDataParallel ddp;
    private boolean closing;
    private boolean closed;

    Join(DistributedDataParallel ddp) {
        this.ddp = ddp;
    }

    /** Called by every forward of a rank that still has data, before any other collective of it. */
    void notifyActive(boolean syncsGradients, boolean syncsBuffers) {
        allReduceCounts(1, syncsGradients ? 1 : 0, syncsBuffers ? 1 : 0);
    }

    boolean isClosing() {
        return closing;
    }

    /**
     * Shadows the other ranks until every rank has joined, then synchronises the final model. Blocks;
     * idempotent.
     *
     * @throws io.tensorbus.c10d.CommunicationException when the group fails or times out
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
            for (long[] counts = allReduceCounts(0, 0, 0); counts[0] > 0; counts = allReduceCounts(0, 0, 0)) {
                lastJoiner = false;
                shadowIteration(counts[1] > 0, counts[2] > 0);
            }
            int src = ddp.commonRank(lastJoiner);
            ddp.syncState(src);
        } finally {
            ddp.leaveJoin();
        }
    }

    private void shadowIteration(boolean gradients, boolean buffers) {
        if (buffers) {
            ddp.syncBuffers(true);
        }
        if (gradients) {
            ddp.reducer().shadowBackward();
        }
    }

    /** Sums (ranks training, of them syncing gradients, of them broadcasting buffers) over the group. */
    private long[] allReduceCounts(int training, int gradients, int buffers) {
        Tensor t = Tensor.of(new int[] {training, gradients, buffers}, 3);
        ddp.await(ddp.processGroup().allReduce(t, ReduceOp.SUM), "the join context's count of ranks still training");
        return new long[] {t.getLong(0), t.getLong(1), t.getLong(2)};
    }
}
