package io.tensorbus.distributed.rpc;

import io.netty.buffer.ByteBuf;
import io.tensorbus.distributed.rpc.impl.RpcFrame;
import io.tensorbus.distributed.rpc.impl.RpcFrameParser;
import io.tensorbus.spi.support.SecretHandshake;
import io.tensorbus.spi.support.shm.SharedMemoryChannel;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.internal.net.NetSocketInternal;
import io.vertx.core.net.NetClient;
import io.vertx.core.net.NetSocket;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * This worker's connection to one callee: the mutual proof of the job's secret first ({@code SecretHandshake}),
 * then OPEN (this worker's name) answered by WELCOME (the callee's), then this worker's calls and their
 * answers. When it breaks, exactly the calls sent on it fail.
 */
final class RpcOutgoing implements RpcFrameParser.FrameHandler {
    private static final System.Logger LOG = System.getLogger(RpcOutgoing.class.getName());
    private final LocalWorker worker;
    private final RpcCalls calls;
    private final RRefContext rrefs;
    private final NetSocket socket;
    private final WorkerInfo target;
    private final Promise<RpcOutgoing> ready = Promise.promise();
    private final Set<Long> inFlight = ConcurrentHashMap.newKeySet();
    private final AtomicBoolean broken = new AtomicBoolean();
    /** Threads writing a call into this connection right now. */
    private final AtomicInteger sending = new AtomicInteger();
    private volatile boolean welcomed;
    private volatile int peerMaxMessage = RpcFrame.MAX_HANDSHAKE_BODY;
    private RpcPayload.Decoded attached;
    private RpcFrameParser parser;
    private final RpcWire wire;
    /** The shared-memory channel offered in OPEN, until WELCOME answers (or the handshake fails). */
    private final AtomicReference<SharedMemoryChannel> offered =
            new AtomicReference<>();

    private RpcOutgoing(LocalWorker worker, RpcCalls calls, RRefContext rrefs, NetSocket socket, WorkerInfo target) {
        this.worker = worker;
        this.calls = calls;
        this.rrefs = rrefs;
        this.socket = socket;
        this.target = target;
        this.wire = new RpcWire(socket);
    }

    /** Connects to {@code target} and completes once both sides have proven the secret and it welcomed us. */
    static Future<RpcOutgoing> connect(LocalWorker worker, RpcCalls calls, RRefContext rrefs, NetClient client,
                                       WorkerInfo target) {
        RpcWorkerTable.Address a = worker.table().address(target);
        return client.connect(a.port(), a.host())
                .recover(e -> Future.failedFuture(new RpcException("cannot connect to worker " + target + " at "
                        + a.host() + ":" + a.port() + ": " + e.getMessage(), e)))
                .compose(s -> SecretHandshake.connect(s, worker.options().secret(), RpcTransport.CHANNEL,
                                worker.options().timeout(), worker.vertx())
                        .recover(e -> Future.failedFuture(new RpcException("worker " + target + " at " + a.host()
                                + ":" + a.port() + " could not be joined: " + e.getMessage(), e)))
                        .compose(v -> new RpcOutgoing(worker, calls, rrefs, s, target).start()));
    }

    private Future<RpcOutgoing> start() {
        parser = new RpcFrameParser(
                () -> welcomed ? worker.options().maxMessageBytes() : RpcFrame.MAX_HANDSHAKE_BODY,
                this, why -> broken("sent a malformed frame: " + why));
        parser.readFrom(socket);
        socket.closeHandler(v -> peerGone("closed the connection"));
        socket.exceptionHandler(e -> peerGone("failed: " + e.getMessage()));
        long deadline = worker.vertx().setTimer(worker.options().timeout().toMillis(),
                t -> broken("did not complete the handshake within " + worker.options().timeout()));
        offered.set(RpcWire.offerTo(worker.options(), worker.table().address(target)));
        write(RpcFrame.frame(RpcFrame.OPEN, 0, worker.options().codec().encode(Arrays.asList(
                worker.self().name(), worker.self().id(), worker.options().maxMessageBytes(),
                RpcWire.offerText(offered.get()))), List.of()));
        return ready.future().onComplete(r -> worker.vertx().cancelTimer(deadline));
    }

    /**
     * Sends call {@code id}, its tensors copied before this returns; fails the call alone when it is larger than
     * the callee accepts.
     *
     * @return false when the call was not sent (it has failed)
     */
    boolean call(long id, String function, RpcPayload.Encoded body) {
        if (!admit(id, function, body.bytes())) {
            return false;
        }
        sending.incrementAndGet();
        try {
            wire.send(RpcFrame.CALL, id, body);
        } finally {
            sending.decrementAndGet();
        }
        wire.expectAnswer();
        return true;
    }

    /**
     * Sends call {@code id} framed earlier (its {@code frame}, which this connection takes over); fails the call
     * alone when the frame is larger than the callee accepts.
     *
     * @return false when the call was not sent (it has failed)
     */
    boolean call(long id, String function, ByteBuf frame) {
        if (!admit(id, function, frame.readableBytes() - RpcFrame.HEADER)) {
            frame.release();
            return false;
        }
        sending.incrementAndGet();
        try {
            wire.send(frame);
        } finally {
            sending.decrementAndGet();
        }
        wire.expectAnswer();
        return true;
    }

    /**
     * True while calls wait for answers and none is being written: a thread writing a large call into shared
     * memory needs the cores for itself and the reading callee, not for this side's link polling for an answer
     * that cannot come yet.
     */
    private boolean awaitsAnswer() {
        return !inFlight.isEmpty() && sending.get() == 0;
    }

    /** Counts call {@code id} in flight, or fails it when the connection broke or it is too large. */
    private boolean admit(long id, String function, long bytes) {
        if (bytes > peerMaxMessage || broken.get()) {
            calls.fail(id, new RpcException(broken.get() ? "worker " + target + " was lost before '" + function
                    + "' was sent" : "the arguments of '" + function + "' are " + bytes + " bytes, more than the "
                    + peerMaxMessage + " worker " + target + " accepts (its maxMessageBytes)"));
            return false;
        }
        inFlight.add(id);
        if (broken.get() && inFlight.remove(id)) {
            // Broke between the check and the add: broken() may have missed this call.
            calls.fail(id, new RpcException("worker " + target + " was lost before '" + function + "' was sent"));
            return false;
        }
        return true;
    }

    /** Writes a frame; the socket takes it over and releases it once written (or refused). */
    private void write(ByteBuf frame) {
        ((NetSocketInternal) socket).writeMessage(frame);
    }

    /** True once this connection's frames go through shared memory. */
    boolean isSharedMemory() {
        return wire.isSharedMemory();
    }

    void close() {
        socket.close();
    }

    /** The callee is known to be gone: fails the calls sent here, naming {@code why}, and closes. */
    void lost(String why) {
        broken(why);
    }

    @Override
    public void frame(RpcFrame.Header h, byte[] body) {
        assert RpcTransport.onEventLoop(socket) : "a frame of " + socket.remoteAddress() + " parsed off its event loop";
        try {
            switch (h.kind()) {
                case RpcFrame.WELCOME -> welcome(decode(body));
                case RpcFrame.REFUSED -> refused(body);
                case RpcFrame.RETURN -> returned(h.id(), result(h, body));
                case RpcFrame.RAISE -> answered(h.id(), null, decode(body));
                case RpcFrame.DOORBELL -> wire.doorbell();
                default -> broken("sent a frame of kind " + h.kind() + ", which a callee never sends");
            }
        } catch (RuntimeException e) {
            broken("sent a message that does not decode: " + e.getMessage());
        }
    }

    /** Allocates the tensors of a result; its bytes will be read straight into them. */
    @Override
    public List<MemorySegment> attachments(RpcFrame.Header h, byte[] body) {
        assert RpcTransport.onEventLoop(socket) : "a frame of " + socket.remoteAddress() + " parsed off its event loop";
        if (h.kind() != RpcFrame.RETURN || !welcomed) {
            throw new IllegalArgumentException("attachments on a frame of kind " + h.kind());
        }
        attached = RpcPayload.decode(rrefs, body,
                (long) worker.options().maxMessageBytes() - body.length);
        return attached.targets();
    }

    private RpcPayload.Decoded result(RpcFrame.Header h, byte[] body) {
        RpcPayload.Decoded d = h.hasAttachments() ? attached : RpcPayload.decode(rrefs, body, 0);
        attached = null;
        return d;
    }

    /**
     * A RETURN: its value completes the call. One of a distributed autograd context is recorded first; when its
     * context is gone here (closed while the call ran), the call fails saying so and the value is dropped.
     */
    private void returned(long id, RpcPayload.Decoded d) {
        Object value = d.values().get(0);
        if (d.meta() != null && inFlight.contains(id)) {
            try {
                worker.autograd().recordRecv(target.id(), d.meta(), d.tensors());
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.INFO, "dropping the result of call {0} from {1}: {2}", id, target,
                        e.getMessage());
                inFlight.remove(id);
                calls.fail(id, new RpcException("the result from " + target + " arrived for a distributed autograd "
                        + "context that is gone: " + e.getMessage(), e));
                return;
            }
        }
        answered(id, value, null);
    }

    private void welcome(List<Object> m) {
        String acceptor = (String) m.get(0);
        if (welcomed || !acceptor.equals(target.name())) {
            broken(welcomed ? "welcomed this worker twice" : "answered as '" + acceptor + "'");
            return;
        }
        peerMaxMessage = Math.max(RpcFrame.MAX_HANDSHAKE_BODY, ((Number) m.get(1)).intValue());
        boolean mapped = m.size() > 2 && m.get(2) instanceof Number n && n.intValue() == 1;
        SharedMemoryChannel channel = offered.getAndSet(null);
        if (channel != null) {
            // Mapped by both, or refused: either way the file has served its purpose.
            channel.unlink();
            if (mapped) {
                wire.useSharedMemory(channel, this, worker.options().maxMessageBytes(),
                        why -> broken("sent a malformed frame: " + why), this::awaitsAnswer);
            } else {
                channel.close();
            }
        } else if (mapped) {
            broken("answered a shared-memory offer it was not made");
            return;
        }
        welcomed = true;
        ready.tryComplete(this);
    }

    private void refused(byte[] body) {
        String why = (String) decode(body).get(0);
        broken("refused the connection from " + worker.self() + ": " + why);
    }

    private void answered(long id, Object value, List<Object> raised) {
        if (!welcomed || !inFlight.remove(id)) {
            broken("answered call " + id + ", which it was not sent");
            return;
        }
        if (raised == null) {
            calls.complete(id, value);
            return;
        }
        RpcCalls.RpcCall call = calls.call(id);
        calls.fail(id, new RemoteException(target.name(), call == null ? "?" : call.function(), (String) raised.get(0),
                (String) raised.get(1), (String) raised.get(2)));
    }

    /**
     * The callee's end went away: besides what {@link #broken} does, the distributed autograd contexts it was a
     * part of are released here (their backward passes could not finish).
     */
    private void peerGone(String why) {
        // Answers the callee wrote into shared memory before it closed are read first, as TCP's bytes would be.
        wire.closed(new RpcException("worker " + target + " " + why));
        boolean wasUp = welcomed && !broken.get();
        broken(why);
        if (wasUp) {
            calls.gone(target, why);
            worker.autograd().workerLost(target.id());
        }
    }

    /** Fails the handshake and exactly the calls sent on this connection; later calls reconnect. */
    private void broken(String why) {
        if (!broken.compareAndSet(false, true)) {
            return;
        }
        parser.stop();
        wire.stop();
        SharedMemoryChannel channel = offered.getAndSet(null);
        if (channel != null) {
            channel.unlink();
            channel.close();
        }
        RpcException e = new RpcException("worker " + target + " " + why);
        ready.tryFail(e);
        calls.forget(target, this);
        for (Long id : List.copyOf(inFlight)) {
            RpcCalls.RpcCall call = calls.call(id);
            calls.fail(id, new RpcException("worker " + target + " was lost while '"
                    + (call == null ? "?" : call.function()) + "' ran: " + why));
        }
        inFlight.clear();
        socket.close();
    }

    @SuppressWarnings("unchecked")
    private List<Object> decode(byte[] body) {
        return (List<Object>) worker.options().codec().decode(body, List.class);
    }
}
