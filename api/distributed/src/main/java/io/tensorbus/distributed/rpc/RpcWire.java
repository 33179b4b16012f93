package io.tensorbus.distributed.rpc;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.util.concurrent.EventExecutor;
import io.tensorbus.distributed.rpc.impl.RpcFrame;
import io.tensorbus.distributed.rpc.impl.RpcFrameParser;
import io.tensorbus.spi.support.shm.SharedMemoryChannel;
import io.tensorbus.spi.support.shm.SharedMemoryLink;
import io.vertx.core.Context;
import io.vertx.core.internal.net.NetSocketInternal;
import io.vertx.core.net.NetSocket;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

/**
 * Where the frames of one RPC connection travel: its socket, or, once both ends agreed on a channel in the
 * handshake (the caller offers one in OPEN when the callee published the same shared-memory host, the callee
 * maps it and says so in WELCOME), a {@link SharedMemoryLink}, TensorPipe's {@code shm} transport. The socket
 * then carries only doorbells, and its closing still means the peer is gone.
 */
final class RpcWire {
    private static final System.Logger LOG = System.getLogger(RpcWire.class.getName());
    /**
     * How long a link polls after its last progress, idle and while calls wait for answers, and after how long
     * without progress it yields between polls, in nanoseconds. A round trip needs the caller, both event loops
     * and the function's thread: yielding after 2 us rather than the links' default 20 lets them share two cores
     * (an {@code rpcSync} took 28-43 us instead of 76-84 in {@code bench rpc}, 2026-11-30).
     */
    private static final SharedMemoryLink.Polling POLLING = new SharedMemoryLink.Polling(
            Long.getLong("tensorbus.rpc.sharedMemorySpinMicros", 50) * 1000,
            Long.getLong("tensorbus.rpc.sharedMemoryWaitSpinMicros", 1000) * 1000,
            Long.getLong("tensorbus.rpc.sharedMemoryYieldMicros", 2) * 1000);
    /**
     * How long a sending thread waits for room in the ring without progress before it copies the rest of a large
     * message aside, in nanoseconds: while it waits the peer reads what it wrote, so a message larger than the
     * ring is copied once instead of twice. Event-loop threads never wait.
     */
    private static final long WRITE_PATIENCE_NANOS = 2_000_000;
    /** A fallback to TCP is logged once per process: every connection of a host would say the same. */
    private static final AtomicBoolean FALLBACK_LOGGED = new AtomicBoolean();
    private static final byte[] NO_BODY = new byte[0];

    private final NetSocketInternal socket;
    private final EventExecutor loop;
    private final ByteBuf doorbell = Unpooled.unreleasableBuffer(
            RpcFrame.frame(RpcFrame.DOORBELL, 0, NO_BODY, List.of()).asReadOnly());
    /** Set once on the event loop; read by the threads that send. */
    private volatile SharedMemoryLink link;
    private RpcFrameParser ringParser;

    RpcWire(NetSocket socket) {
        this.socket = (NetSocketInternal) socket;
        this.loop = this.socket.channelHandlerContext().executor();
    }

    /**
     * A channel for a connection to {@code target} when both sides take shared memory and are on this host,
     * else null (a channel that cannot be made is logged once and the connection stays on TCP).
     */
    static SharedMemoryChannel offerTo(RpcOptions options, RpcWorkerTable.Address target) {
        if (!options.sharedMemory() || target.sharedMemoryHost().isEmpty()
                || !target.sharedMemoryHost().equals(SharedMemoryChannel.hostIdentity(options.sharedMemoryDir()))) {
            return null;
        }
        try {
            return SharedMemoryChannel.create(options.sharedMemoryDir(), options.sharedMemoryRingBytes());
        } catch (IOException e) {
            fallBack("no shared-memory channel could be made in " + options.sharedMemoryDir() + ": " + e.getMessage());
            return null;
        }
    }

    /** The OPEN field that offers {@code channel} (null for none). */
    static String offerText(SharedMemoryChannel channel) {
        return channel == null ? null : HexFormat.of().formatHex(channel.offer());
    }

    /**
     * Maps the channel an OPEN offered, or returns null (no offer, shared memory off here, or the file cannot be
     * mapped: logged once).
     */
    static SharedMemoryChannel accept(RpcOptions options, Object offer) {
        if (!(offer instanceof String text) || !options.sharedMemory()) {
            return null;
        }
        try {
            return SharedMemoryChannel.accept(options.sharedMemoryDir(), HexFormat.of().parseHex(text));
        } catch (IOException | IllegalArgumentException e) {
            fallBack("an offered shared-memory channel could not be mapped: " + e.getMessage());
            return null;
        }
    }

    private static void fallBack(String why) {
        if (FALLBACK_LOGGED.compareAndSet(false, true)) {
            LOG.log(System.Logger.Level.WARNING, "RPC connections stay on TCP: " + why);
        }
    }

    /**
     * From now on frames go through {@code channel}; its incoming frames go to {@code frames}, parsed with
     * {@code maxBody}, and a malformed one to {@code onError}. {@code waiting} says whether answers are awaited
     * (the link then polls for longer before it sleeps). Event loop only.
     */
    void useSharedMemory(SharedMemoryChannel channel, RpcFrameParser.FrameHandler frames, int maxBody,
                         Consumer<String> onError, BooleanSupplier waiting) {
        assert loop.inEventLoop();
        ringParser = new RpcFrameParser(() -> maxBody, frames, onError);
        RpcFrameParser parser = ringParser;
        SharedMemoryLink.Reader reader = new SharedMemoryLink.Reader() {
            @Override
            public long consume(MemorySegment bytes) {
                parser.read(bytes);
                return bytes.byteSize();
            }

            @Override
            public boolean isParked() {
                return false;
            }
        };
        link = new SharedMemoryLink(channel, reader, loop, () -> socket.writeMessage(doorbell.retainedDuplicate()),
                POLLING, waiting, step -> {
                    step.run();
                    return link != null;
                });
        // The peer may have written already.
        link.poll();
    }

    /** True once frames go through shared memory. */
    boolean isSharedMemory() {
        return link != null;
    }

    /** Sends a frame of {@code kind} for call {@code id}; its tensors are copied before this returns. Any thread. */
    void send(int kind, long id, RpcPayload.Encoded payload) {
        SharedMemoryLink l = link;
        if (l == null) {
            socket.writeMessage(RpcFrame.frame(kind, id, payload.body(), payload.segments()));
            return;
        }
        List<MemorySegment> segments = payload.segments();
        MemorySegment[] parts = new MemorySegment[2 + segments.size()];
        parts[0] = MemorySegment.ofArray(RpcFrame.header(kind, id, payload.body().length, !segments.isEmpty()));
        parts[1] = MemorySegment.ofArray(payload.body());
        for (int i = 0; i < segments.size(); i++) {
            parts[2 + i] = segments.get(i);
        }
        l.writeOrCopy(patience(), parts);
    }

    private long patience() {
        return loop.inEventLoop() || Context.isOnEventLoopThread() ? 0 : WRITE_PATIENCE_NANOS;
    }

    /** Sends a frame framed earlier and releases it. Any thread. */
    void send(ByteBuf frame) {
        SharedMemoryLink l = link;
        if (l == null) {
            socket.writeMessage(frame);
            return;
        }
        try {
            l.writeOrCopy(patience(), MemorySegment.ofBuffer(frame.nioBuffer()));
        } finally {
            frame.release();
        }
    }

    /** A call went out: the link looks for its answer without waiting for a doorbell. Any thread. */
    void expectAnswer() {
        SharedMemoryLink l = link;
        if (l != null) {
            loop.execute(l::expect);
        }
    }

    /** A DOORBELL arrived on the socket. Event loop only. */
    void doorbell() {
        SharedMemoryLink l = link;
        if (l != null) {
            l.wake();
        }
    }

    /** Parses nothing more from shared memory (the connection is refused or broken). */
    void stop() {
        if (ringParser != null) {
            ringParser.stop();
        }
    }

    /**
     * The socket closed: reads what the peer wrote into shared memory before it closed (an answer sent just
     * before a graceful shutdown), then unmaps the channel. Event loop only.
     */
    void closed(Throwable cause) {
        SharedMemoryLink l = link;
        if (l != null) {
            l.poll();
            link = null;
            l.close(cause);
        }
    }
}
