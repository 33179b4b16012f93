package io.tensorbus.backend.tcp;

import io.tensorbus.c10d.CollectiveMismatchException;
import io.tensorbus.c10d.CommunicationException;
import io.tensorbus.spi.BackendOptions;
import java.util.HashMap;
import java.util.Map;

/**
 * What a tcp group does when a collective times out: before it fails, it asks every peer how far it got and
 * what it called there ({@link StallReport}), so that the error names the ranks that never joined, or a mismatch
 * where no frame crossed; and the answers it gives to its peers' questions. Runs on the group's event loop.
 */
final class StallReports {
    /** How long a stall report waits for the peers' answers, at most, in milliseconds. */
    static final long STATUS_WAIT_MILLIS = 500;

    private final TcpBackend backend;
    private final BackendOptions options;
    private final Map<Long, StallReport> reports = new HashMap<>();

    StallReports(TcpBackend backend, BackendOptions options) {
        this.backend = backend;
        this.options = options;
    }

    /** Collective {@code op} timed out: ask the peers, then break the group with what they said. */
    void timedOut(CollectiveOp op) {
        op.timer = -1;
        StallReport report = new StallReport(backend, op);
        reports.put(op.sequence, report);
        Frame request = new Frame(Frame.STATUS_REQUEST, 0, 0, Frame.NO_REDUCE, -1, -1, op.sequence, 0, 0,
                backend.groupHash(), 0, 0);
        for (int p = 0; p < options.worldSize(); p++) {
            PeerConnection c = backend.connection(p);
            if (c != null) {
                c.write(request, null);
            }
        }
        long wait = Math.min(STATUS_WAIT_MILLIS, Math.max(1, options.timeout().toMillis() / 4));
        backend.vertx().setTimer(wait, id -> {
            reports.remove(op.sequence);
            if (!backend.isActive(op.sequence)) {
                return; // it finished (or the group broke) while the peers were asked
            }
            CommunicationException e = report.exception(options);
            if (e instanceof CollectiveMismatchException m) {
                backend.failure().mismatchFound(m);
            } else {
                backend.failure().breakGroup(e);
            }
        });
    }

    /**
     * The answer to a peer's stall question about collective {@code request.tag()}: how many collectives this
     * rank has called and, when it is in that collective (or finished it recently), that call's fingerprint,
     * so that a mismatch where no frame crossed (two ranks that both only receive) is told apart from a stall.
     */
    Frame statusReply(Frame request) {
        long sequence = request.tag();
        Call call = backend.callOf(sequence);
        if (call == null) {
            return new Frame(Frame.STATUS_REPLY, 0, 0, Frame.NO_REDUCE, -1, -1, sequence, 0, 0, backend.groupHash(),
                    0, backend.called());
        }
        return new Frame(Frame.STATUS_REPLY, call.opcode().code, call.dtype().ordinal(), call.reduceOpCode(),
                call.root(), -1, sequence, call.numel(), call.shapeHash(), backend.groupHash(), 0, backend.called());
    }

    /** A peer's answer about one of this rank's stalled collectives. */
    void statusArrived(int peer, Frame reply) {
        StallReport r = reports.get(reply.tag());
        if (r != null) {
            r.answer(peer, reply);
        }
    }
}
