package io.tensorbus.spi.support;

import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.socket.DuplexChannel;
import io.netty.util.ReferenceCountUtil;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.internal.net.NetSocketInternal;
import java.util.concurrent.TimeUnit;

/**
 * Closes a connection without resetting it: half-closes (a FIN behind what was written), reads and drops what the
 * peer still sends, and closes once the peer has closed too or the linger time has passed. Closing with unread bytes
 * makes the kernel reset the connection, and a reset drops what the peer has not read yet, such as the last message
 * that says why this rank leaves.
 */
public final class LingeringClose {
    private LingeringClose() {
    }

    /**
     * Starts closing {@code socket} so; completes once it is closed, at most {@code lingerMillis} (milliseconds)
     * from now. Replaces the socket's message, close and exception handlers; call it on the socket's event loop.
     *
     * @throws IllegalArgumentException if {@code lingerMillis} is not positive
     */
    public static Future<Void> close(NetSocketInternal socket, long lingerMillis) {
        if (lingerMillis <= 0) {
            throw new IllegalArgumentException("lingerMillis must be positive, was " + lingerMillis);
        }
        Promise<Void> closed = Promise.promise();
        Channel channel = socket.channelHandlerContext().channel();
        socket.messageHandler(ReferenceCountUtil::release);
        socket.closeHandler(v -> closed.tryComplete());
        socket.exceptionHandler(e -> socket.close());
        var linger = channel.eventLoop().schedule(() -> {
            socket.close();
        }, lingerMillis, TimeUnit.MILLISECONDS);
        closed.future().onComplete(v -> linger.cancel(false));
        channel.config().setAutoRead(true);
        // Behind what Vert.x still holds to write: a half-close from under it would drop those bytes.
        socket.writeMessage(Unpooled.EMPTY_BUFFER).onComplete(written -> {
            if (written.succeeded() && channel instanceof DuplexChannel duplex && channel.isActive()) {
                duplex.shutdownOutput();
            } else {
                socket.close();
            }
        });
        return closed.future();
    }
}
