package io.tensorbus.backend.tcp;

import io.tensorbus.c10d.CommunicationTimeoutException;
import io.tensorbus.spi.BackendOptions;
import io.tensorbus.spi.DeviceBuffer;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;

/**
 * The point-to-point messages of one tcp group, matched by (peer, tag) in the order they were called. The part of
 * the backend that callers' threads run: a send of host memory to a peer on shared memory is written on the
 * caller's thread, and a blocking receive of a small message polls its ring there; every other send and receive
 * hops to the group's event loop, and the counters here keep the two paths from overtaking each other.
 */
final class PointToPoint {
    /**
     * The largest message a blocking receive polls for on its own thread: beyond it the copy, not the two
     * hand-offs, is the cost, and a longer wait on a spinning thread was seen to keep the sender from the core
     * it needed (1 MiB round trips of 3-5 ms instead of 0.3).
     */
    static final long CALLER_RECV_MAX_BYTES = Router.PARK_BYTES;

    private final TcpBackend backend;
    private final BackendOptions options;
    /** Per peer: completes once the last message to it was handed to its connection. */
    private final Future<?>[] lastSend;
    /**
     * Per peer: sends on their way through the event loop, which a send written on the caller's thread must not pass.
     */
    private final AtomicInteger[] queuedSends;
    /** Receives handed to the event loop and not yet registered with the router: none may be overtaken. */
    private final AtomicInteger receivesPosting = new AtomicInteger();

    PointToPoint(TcpBackend backend, BackendOptions options) {
        this.backend = backend;
        this.options = options;
        this.lastSend = new Future<?>[options.worldSize()];
        Arrays.fill(lastSend, Future.succeededFuture());
        this.queuedSends = new AtomicInteger[options.worldSize()];
        Arrays.setAll(queuedSends, i -> new AtomicInteger());
    }

    Future<Void> send(DeviceBuffer buffer, int dst, int tag) {
        Frame header = new Frame(Frame.DATA, Opcode.SEND.code, buffer.dtype().ordinal(), Frame.NO_REDUCE, -1, -1,
                tag, buffer.numel(), 0, backend.groupHash(), buffer.byteSize(), 0);
        GroupFailure failure = backend.failure();
        PeerConnection peer = dst >= 0 && dst < options.worldSize() ? backend.connection(dst) : null;
        if (buffer.isHost() && peer != null && !failure.isBroken() && !backend.isClosed()
                && queuedSends[dst].get() == 0 && peer.tryWriteNow(header, buffer.segment())) {
            // Written into shared memory on this thread: no hand-off to the event loop and back.
            return Future.succeededFuture();
        }
        // While a send waits for the event loop, later ones to the same rank queue behind it (same-tag order).
        queuedSends[dst].incrementAndGet();
        Promise<Void> promise = backend.context().promise();
        promise.future().onComplete(ar -> queuedSends[dst].decrementAndGet());
        backend.context().runOnContext(v -> {
            String what = failure.inGroup("send to " + backend.who(dst));
            if (failure.failIfBroken(promise, what)) {
                return;
            }
            long timer = backend.vertx().setTimer(options.timeout().toMillis(),
                    id -> promise.tryFail(timeout("send to", dst, tag)));
            Region region = Region.of(buffer);
            Future<MemorySegment> bytes = backend.hostBytes(region);
            writeInOrder(dst, header, bytes).onComplete(ar -> {
                if (bytes.succeeded()) {
                    backend.doneWith(region, bytes.result());
                }
                backend.vertx().cancelTimer(timer);
                if (ar.succeeded()) {
                    promise.tryComplete();
                } else {
                    promise.tryFail(failure.isBroken() ? failure.cause() : failure.lost(dst, -1, what, ar.cause()));
                }
            });
        });
        return promise.future();
    }

    int tryRecvOnCallerThread(DeviceBuffer buffer, int src, int tag, long patienceNanos) {
        if (!buffer.isHost() || buffer.byteSize() > CALLER_RECV_MAX_BYTES || src < 0 || src >= options.worldSize()
                || patienceNanos <= 0) {
            return -1;
        }
        PeerConnection peer = backend.connection(src);
        // Only while nothing could come first: no receive posted or on its way, no early message held.
        BooleanSupplier quiet = () -> !backend.failure().isBroken() && !backend.isClosed()
                && receivesPosting.get() == 0 && backend.router().p2pQuiet();
        return peer != null && peer.tryReceiveNow(buffer, tag, patienceNanos, quiet) ? src : -1;
    }

    Future<Integer> recv(DeviceBuffer buffer, int src, int tag) {
        Promise<Integer> promise = backend.context().promise();
        receivesPosting.incrementAndGet();
        backend.context().runOnContext(v -> {
            try {
                post(promise, buffer, src, tag);
            } finally {
                receivesPosting.decrementAndGet();
            }
        });
        return promise.future();
    }

    /** Registers a receive with the router, on the event loop, with its timeout. */
    private void post(Promise<Integer> promise, DeviceBuffer buffer, int src, int tag) {
        GroupFailure failure = backend.failure();
        if (failure.failIfBroken(promise, failure.inGroup("recv from " + (src < 0 ? "any rank" : backend.who(src))))) {
            return;
        }
        Router router = backend.router();
        StagingPool staging = backend.staging();
        MemorySegment landing = buffer.isHost() ? buffer.segment() : staging.take(buffer.byteSize());
        Router.Pending p = router.expectP2p(src, tag, Sink.copyInto(landing), buffer.dtype());
        backend.expectData();
        if (src >= 0 && failure.isGone(src) && router.unmatched(p)) {
            // Nothing more can come from a rank that left (what it sent before is matched above).
            router.withdraw(p);
            promise.tryFail(failure.lost(src, -1, failure.inGroup("recv from " + backend.who(src) + " (tag " + tag
                    + ")"), null, failure.leftMessage(src)));
            return;
        }
        long timer = backend.vertx().setTimer(options.timeout().toMillis(), id -> {
            router.withdraw(p);
            p.promise.tryFail(timeout("recv from", src, tag));
        });
        p.promise.future().onComplete(ar -> {
            backend.vertx().cancelTimer(timer);
            if (ar.failed() || buffer.isHost()) {
                promise.handle(ar);
            } else {
                backend.upload(landing, Region.of(buffer)).onComplete(up -> {
                    staging.give(landing);
                    promise.handle(up.map(ar.result()));
                });
            }
        });
    }

    /**
     * Writes {@code bytes} to {@code dst}, but not before the previous message to {@code dst} was handed to its
     * connection: the bytes of a device buffer arrive from the device at their own pace, and messages with the
     * same tag must still leave in the order they were sent.
     */
    private Future<Void> writeInOrder(int dst, Frame header, Future<MemorySegment> bytes) {
        Promise<Void> handedOver = Promise.promise();
        Future<?> previous = lastSend[dst];
        lastSend[dst] = handedOver.future();
        return previous.transform(ignored -> bytes).compose(b -> {
            Future<Void> written = backend.connection(dst).write(header, b);
            handedOver.tryComplete();
            return written;
        }).onFailure(e -> handedOver.tryComplete());
    }

    /** A point-to-point operation that timed out fails alone: the group stays usable. */
    private CommunicationTimeoutException timeout(String what, int peer, int tag) {
        String whom = peer < 0 ? "any rank" : backend.who(peer);
        return new CommunicationTimeoutException(options.groupName(), -1, what + " " + whom + " (tag " + tag
                + ") in group '" + options.groupName() + "' timed out after " + options.timeout() + " on "
                + backend.who(options.rank()), peer < 0 ? new int[0] : new int[] {peer});
    }
}
