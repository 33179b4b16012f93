package io.tensorbus.distributed.rpc.impl;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.internal.buffer.BufferInternal;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

/**
 * The RPC wire frame: a 20-byte little-endian header ({@code magic 'TBRP' u32, version u8, kind u8,
 * flags u16, call id u64, body length u32}) followed by the body, bytes of the RPC codec, and, with the
 * {@link #ATTACHMENTS} flag, the raw bytes of the tensors the body describes. See
 * {@code docs/rpc-design.md}.
 */
public final class RpcFrame {
    /** "TBRP" read as a little-endian int. */
    public static final int MAGIC = 0x50524254;
    /** The only version so far. */
    public static final int VERSION = 1;
    /** Header bytes. */
    public static final int HEADER = 20;
    /** Bodies from this size on are wrapped behind the header instead of copied after it. */
    private static final int WRAP_FROM = 64 * 1024;

    /**
     * Acceptor to caller, answering OPEN: [acceptor name, acceptor nonce, acceptor proof, the largest
     * message the acceptor accepts].
     */
    public static final int CHALLENGE = 1;
    /** Caller to acceptor: [caller proof]. */
    public static final int HELLO = 2;
    /** Acceptor to caller: the connection may carry calls. */
    public static final int WELCOME = 3;
    /** Either side: [reason]; the connection closes. */
    public static final int REFUSED = 4;
    /**
     * Caller to acceptor, the first frame: [caller name, caller rank, caller nonce, the largest message the
     * caller accepts]. The acceptor speaks only when asked, so nothing it sends can reach the caller before
     * the caller reads.
     */
    public static final int OPEN = 5;
    /** The largest frame body before the handshake completes: names, nonces and proofs only. */
    public static final int MAX_HANDSHAKE_BODY = 1024;
    /** Caller to callee: [function, arguments]. */
    public static final int CALL = 10;
    /** Callee to caller: [result]. */
    public static final int RETURN = 11;
    /** Callee to caller: [exception class, message, stack text]. */
    public static final int RAISE = 12;

    private RpcFrame() {
    }

    /** Flag: raw tensor bytes (attachments) follow the body; the body describes them. */
    public static final int ATTACHMENTS = 1;

    /** A frame header as read. */
    public record Header(int kind, int flags, long id, int bodyLength) {
        /** True when attachments follow the body. */
        public boolean hasAttachments() {
            return (flags & ATTACHMENTS) != 0;
        }
    }

    /**
     * The frame of {@code kind} for call {@code id} with {@code body}, one buffer for one write (so that
     * frames written from several threads never interleave); the body is wrapped, not copied.
     */
    public static Buffer encode(int kind, long id, byte[] body) {
        return encode(kind, id, body, List.of());
    }

    /**
     * As {@link #encode(int, long, byte[])} with {@code attachments} written after the body straight from
     * their memory (the frame keeps them reachable until written).
     */
    public static Buffer encode(int kind, long id, byte[] body, List<MemorySegment> attachments) {
        boolean small = body.length < WRAP_FROM;
        if (attachments.isEmpty()) {
            ByteBuf header = header(Unpooled.buffer(HEADER + (small ? body.length : 0)), kind, 0, id, body.length);
            return BufferInternal.buffer(small ? header.writeBytes(body)
                    : Unpooled.wrappedBuffer(header, Unpooled.wrappedBuffer(body)));
        }
        // Every part direct: the native transport then writes them with one writev instead of first copying
        // the whole frame (attachments included) into a new direct buffer, as it does for heap parts.
        List<ByteBuf> parts = new ArrayList<>();
        parts.add(header(Unpooled.directBuffer(HEADER + body.length), kind, ATTACHMENTS, id, body.length)
                .writeBytes(body));
        for (MemorySegment a : attachments) {
            if (a.byteSize() > 0) {
                parts.add(Unpooled.wrappedBuffer(a.asByteBuffer()));
            }
        }
        return BufferInternal.buffer(Unpooled.wrappedBuffer(parts.toArray(ByteBuf[]::new)));
    }

    private static ByteBuf header(ByteBuf b, int kind, int flags, long id, int length) {
        return b.writeIntLE(MAGIC).writeByte(VERSION).writeByte(kind).writeShortLE(flags).writeLongLE(id)
                .writeIntLE(length);
    }

    /**
     * Reads a header.
     *
     * @throws IllegalArgumentException naming what is wrong: magic, version, kind, or a body longer than
     *     {@code maxBody}
     */
    public static Header parse(Buffer b, int maxBody) {
        int magic = b.getIntLE(0);
        if (magic != MAGIC) {
            throw new IllegalArgumentException(String.format("bad magic 0x%08x (not a tensorbus RPC peer)", magic));
        }
        int version = b.getByte(4) & 0xff;
        if (version != VERSION) {
            throw new IllegalArgumentException("protocol version " + version + ", this worker speaks " + VERSION);
        }
        int kind = b.getByte(5) & 0xff;
        if (!isKnown(kind)) {
            throw new IllegalArgumentException("unknown frame kind " + kind);
        }
        int flags = b.getShortLE(6) & 0xffff;
        if ((flags & ~ATTACHMENTS) != 0 || (flags != 0 && kind != CALL && kind != RETURN)) {
            throw new IllegalArgumentException("flags 0x" + Integer.toHexString(flags) + " on a frame of kind " + kind);
        }
        int length = b.getIntLE(16);
        if (length < 0 || length > maxBody) {
            throw new IllegalArgumentException("a frame announces " + Integer.toUnsignedString(length)
                    + " body bytes, more than the " + maxBody + " allowed (maxMessageBytes)");
        }
        return new Header(kind, flags, b.getLongLE(8), length);
    }

    private static boolean isKnown(int kind) {
        return (kind >= CHALLENGE && kind <= OPEN) || (kind >= CALL && kind <= RAISE);
    }
}
