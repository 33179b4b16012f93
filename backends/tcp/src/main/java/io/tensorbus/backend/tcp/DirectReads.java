package io.tensorbus.backend.tcp;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.AdaptiveRecvByteBufAllocator;
import io.netty.channel.ChannelConfig;
import io.netty.channel.RecvByteBufAllocator;
import io.netty.util.UncheckedBooleanSupplier;

import java.lang.foreign.MemorySegment;
import java.util.function.Supplier;

/**
 * The receive-buffer policy of a peer connection: while a payload streams into a tensor, the socket reads
 * straight into the tensor's memory (the buffer Netty reads into is a window on it), so the payload is
 * copied once, by the kernel. Otherwise reads go into pooled buffers that grow up to 1 MiB.
 */
final class DirectReads implements RecvByteBufAllocator {
    private final AdaptiveRecvByteBufAllocator pooled = new AdaptiveRecvByteBufAllocator(512, 64 * 1024, 1 << 20);
    private final Supplier<MemorySegment> target;

    /** {@code target} names the memory the next bytes belong in, or null when they go to a pooled buffer. */
    DirectReads(Supplier<MemorySegment> target) {
        this.target = target;
    }

    @Override
    public Handle newHandle() {
        return new WindowHandle((ExtendedHandle) pooled.newHandle());
    }

    private final class WindowHandle implements ExtendedHandle {
        private final ExtendedHandle delegate;

        WindowHandle(ExtendedHandle delegate) {
            this.delegate = delegate;
        }

        @Override
        public ByteBuf allocate(ByteBufAllocator alloc) {
            MemorySegment window = target.get();
            if (window == null) {
                return delegate.allocate(alloc);
            }
            return Unpooled.wrappedBuffer(window.asByteBuffer()).clear();
        }

        @Override
        public int guess() {
            return delegate.guess();
        }

        @Override
        public void reset(ChannelConfig config) {
            delegate.reset(config);
        }

        @Override
        public void incMessagesRead(int numMessages) {
            delegate.incMessagesRead(numMessages);
        }

        @Override
        public void lastBytesRead(int bytes) {
            delegate.lastBytesRead(bytes);
        }

        @Override
        public int lastBytesRead() {
            return delegate.lastBytesRead();
        }

        @Override
        public void attemptedBytesRead(int bytes) {
            delegate.attemptedBytesRead(bytes);
        }

        @Override
        public int attemptedBytesRead() {
            return delegate.attemptedBytesRead();
        }

        @Override
        public boolean continueReading() {
            return delegate.continueReading();
        }

        @Override
        public boolean continueReading(UncheckedBooleanSupplier maybeMoreDataSupplier) {
            return delegate.continueReading(maybeMoreDataSupplier);
        }

        @Override
        public void readComplete() {
            delegate.readComplete();
        }
    }
}
