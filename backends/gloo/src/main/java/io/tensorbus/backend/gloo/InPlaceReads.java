package io.tensorbus.backend.gloo;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.ChannelConfig;
import io.netty.channel.RecvByteBufAllocator;
import io.netty.util.UncheckedBooleanSupplier;
import io.vertx.core.internal.net.NetSocketInternal;

/**
 * How Netty reads a gloo pair's socket: while the pair reads a large payload, straight into the receive's own memory,
 * as gloo's {@code Pair::read} reads into its buffer, so a 64 MiB all-reduce costs no copy out of Netty's buffers;
 * otherwise as the channel's own allocator reads. Netty asks a channel for its read handle once, at its first read,
 * so this is installed before that read. A buffer is read in place only once every buffer read before it has been
 * taken in: Vert.x may queue a message, and bytes read past it must not land in the receive first.
 */
final class InPlaceReads implements RecvByteBufAllocator {
    private final RecvByteBufAllocator usual;
    private GlooPair pair;

    private InPlaceReads(RecvByteBufAllocator usual) {
        this.usual = usual;
    }

    /** The reads of {@code socket}, installed now unless they already are. */
    static InPlaceReads install(NetSocketInternal socket) {
        ChannelConfig config = socket.channelHandlerContext().channel().config();
        if (config.getRecvByteBufAllocator() instanceof InPlaceReads reads) {
            return reads;
        }
        InPlaceReads reads = new InPlaceReads(config.getRecvByteBufAllocator());
        config.setRecvByteBufAllocator(reads);
        return reads;
    }

    /** From now on, reads may land in {@code reader}'s receives. */
    void feed(GlooPair reader) {
        this.pair = reader;
    }

    @Override
    public Handle newHandle() {
        return new InPlaceHandle((ExtendedHandle) usual.newHandle());
    }

    /**
     * The channel's own handle with {@code allocate} swapped: an {@link ExtendedHandle}, as the epoll transport
     * requires one (Netty's {@code DelegatingHandle} is not).
     */
    private final class InPlaceHandle implements ExtendedHandle {
        private final ExtendedHandle usual;
        /** The buffer handed out last: while it is not released, it may wait in a queue. */
        private ByteBuf last;

        InPlaceHandle(ExtendedHandle usual) {
            this.usual = usual;
        }

        @Override
        public ByteBuf allocate(ByteBufAllocator alloc) {
            ByteBuf target = pair != null && (last == null || last.refCnt() == 0) ? pair.inPlaceTarget() : null;
            last = target != null ? target : usual.allocate(alloc);
            return last;
        }

        @Override
        public int guess() {
            return usual.guess();
        }

        @Override
        public void reset(ChannelConfig config) {
            usual.reset(config);
        }

        @Override
        public void incMessagesRead(int numMessages) {
            usual.incMessagesRead(numMessages);
        }

        @Override
        public void lastBytesRead(int bytes) {
            usual.lastBytesRead(bytes);
        }

        @Override
        public int lastBytesRead() {
            return usual.lastBytesRead();
        }

        @Override
        public void attemptedBytesRead(int bytes) {
            usual.attemptedBytesRead(bytes);
        }

        @Override
        public int attemptedBytesRead() {
            return usual.attemptedBytesRead();
        }

        @Override
        public boolean continueReading() {
            return usual.continueReading();
        }

        @Override
        public boolean continueReading(UncheckedBooleanSupplier maybeMoreDataSupplier) {
            return usual.continueReading(maybeMoreDataSupplier);
        }

        @Override
        public void readComplete() {
            usual.readComplete();
        }
    }
}
