package io.tensorbus.distributed.rpc;

import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiPredicate;

/**
 * Sends RRef control messages (ACCEPT, CHILD_ACCEPT, DELETE) until the owner acknowledges them, as the seed's
 * protocol assumes transient message loss: each try has a short deadline, and a lost try is repeated
 * after a growing pause (20 ms doubling to 1 s). The owner applies each message once however often it
 * arrives. Gives up only when the agent closes or the receiver is lost for good (its node left the
 * cluster); what stays unreleased then is in the leak report.
 */
final class RRefControl {
    private static final System.Logger LOG = System.getLogger(RRefControl.class.getName());
    private static final long FIRST_PAUSE_MS = 20;
    private static final long LAST_PAUSE_MS = 1000;

    private final LocalWorker worker;
    private final RRefTransport transport;
    private final AtomicInteger pending = new AtomicInteger();
    private final AtomicLong retries = new AtomicLong();
    /** The deadline of one try. */
    volatile Duration tryTimeout;
    /** Tests: a message this accepts is lost before it is sent (the try fails and is repeated). */
    volatile BiPredicate<String, List<Object>> loseRequest = (f, a) -> false;

    RRefControl(LocalWorker worker, RRefTransport transport) {
        this.worker = worker;
        this.transport = transport;
        Duration t = worker.options().timeout();
        this.tryTimeout = t.compareTo(Duration.ofSeconds(5)) < 0 ? t : Duration.ofSeconds(5);
    }

    /** Sends {@code function(args)} to {@code owner} until acknowledged, then runs {@code acked}. */
    void send(WorkerInfo owner, String function, List<Object> args, Runnable acked) {
        pending.incrementAndGet();
        attempt(owner, function, args, acked, 0);
    }

    /** Messages sent and not yet acknowledged. */
    int pending() {
        return pending.get();
    }

    /** Tries repeated because an earlier one was lost. */
    long retries() {
        return retries.get();
    }

    private void attempt(WorkerInfo owner, String function, List<Object> args, Runnable acked, int tries) {
        if (transport.isClosed() || transport.isLost(owner)) {
            pending.decrementAndGet();
            return;
        }
        try {
            if (loseRequest.test(function, args)) {
                retry(owner, function, args, acked, tries);
                return;
            }
            transport.rpcAsync(owner, tryTimeout, function, args.toArray()).onComplete(r -> {
                if (r.succeeded() || r.cause() instanceof RemoteException) {
                    if (r.failed()) {
                        LOG.log(Level.WARNING, "{0} refused {1}{2}: {3}", owner, function, args,
                                r.cause().getMessage());
                    }
                    pending.decrementAndGet();
                    acked.run();
                } else {
                    retry(owner, function, args, acked, tries);
                }
            });
        } catch (RuntimeException e) {
            // The agent closed meanwhile.
            pending.decrementAndGet();
        }
    }

    private void retry(WorkerInfo owner, String function, List<Object> args, Runnable acked, int tries) {
        retries.incrementAndGet();
        long pause = Math.min(LAST_PAUSE_MS, FIRST_PAUSE_MS << Math.min(tries, 10));
        try {
            worker.vertx().setTimer(pause, t -> attempt(owner, function, args, acked, tries + 1));
        } catch (RuntimeException e) {
            pending.decrementAndGet();
        }
    }
}
