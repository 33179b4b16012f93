package io.tensorbus.backend.tcp;

import io.tensorbus.c10d.CollectiveMismatchException;
import io.tensorbus.c10d.CommunicationException;
import io.tensorbus.c10d.CommunicationTimeoutException;
import io.tensorbus.spi.BackendOptions;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * What a timed-out collective tells its caller: which ranks never joined it. When the deadline passes, the
 * rank asks every peer how many collectives of the group it has called; a peer that has called fewer than
 * {@code sequence} (numbered from 1) never reached this one. Peers that do not answer in time are named as such. A peer
 * whose answer carries a different call for this collective disagrees rather than stalls: that is a
 * {@link CollectiveMismatchException} (the case of two ranks that both only receive, so no frame crossed).
 */
final class StallReport {
    private final TcpBackend backend;
    private final CollectiveOp op;
    private final long[] called;
    private int disagreeing = -1;
    private Frame disagreement;

    StallReport(TcpBackend backend, CollectiveOp op) {
        this.backend = backend;
        this.op = op;
        this.called = new long[backend.size()];
        Arrays.fill(called, -1);
        called[backend.rank()] = op.sequence;
    }

    /** {@code peer}'s answer: how many collectives it called, and the fingerprint of its call of this one if any. */
    void answer(int peer, Frame reply) {
        called[peer] = reply.aux();
        if (reply.opcode() != 0 && !op.call.matches(reply) && disagreement == null) {
            disagreeing = peer;
            disagreement = reply;
        }
    }

    CommunicationException exception(BackendOptions options) {
        if (disagreement != null) {
            return new CollectiveMismatchException(options.groupName(), op.sequence,
                    backend.mismatchMessage(op.sequence, op.call, disagreeing, disagreement)
                    + "; found when it timed out"
                            + " after " + options.timeout() + " with no data exchanged");
        }
        List<Integer> missing = new ArrayList<>();
        List<Integer> silent = new ArrayList<>();
        List<String> behind = new ArrayList<>();
        for (int r = 0; r < called.length; r++) {
            if (called[r] < 0) {
                silent.add(r);
            } else if (called[r] < op.sequence) {
                missing.add(r);
                behind.add(backend.who(r) + " has called " + called[r] + " collectives");
            }
        }
        StringBuilder m = new StringBuilder(backend.describe(op)).append(" timed out after ")
                .append(options.timeout()).append(" on ").append(backend.who(backend.rank())).append(": ");
        if (missing.isEmpty() && silent.isEmpty()) {
            m.append("every rank joined it, so a peer is stalled inside it or issued a different collective");
        } else {
            if (!missing.isEmpty()) {
                m.append("ranks ").append(missing).append(" never joined it (").append(String.join(", ", behind))
                        .append(')');
            }
            if (!silent.isEmpty()) {
                m.append(missing.isEmpty() ? "" : "; ").append("ranks ").append(silent)
                        .append(" did not answer the status request");
            }
        }
        for (int p = 0; p < called.length; p++) {
            PeerConnection c = p == backend.rank() ? null : backend.connection(p);
            String state = c == null ? null : c.sharedMemoryState();
            if (state != null) {
                m.append("; ").append(state);
            }
        }
        int[] ranks = missing.stream().mapToInt(Integer::intValue).toArray();
        return new CommunicationTimeoutException(options.groupName(), op.sequence, m.toString(), ranks);
    }
}
