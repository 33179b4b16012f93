package io.tensorbus.distributed.rpc.impl;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.internal.buffer.BufferInternal;
import java.lang.foreign.MemorySegment;
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
    /** Version 2 added shared memory: an offer in OPEN, an answer in WELCOME, and {@link #DOORBELL}. */
    public static final int VERSION = 2;
    /** Header bytes. */
    public static final int HEADER = 20;

    /**
     * Acceptor to caller, answering OPEN: [acceptor name, the largest message the acceptor accepts, 1 when it
     * mapped the offered shared-memory channel (every later frame but DOORBELL and REFUSED then goes through it)
     * or 0]; the connection may carry calls. (Kinds 1 and 2 carried the old in-band secret proof; the secret is now
     * proven before the first frame.)
     */
    public static final int WELCOME = 3;
    /** Either side: [reason]; the connection closes. */
    public static final int REFUSED = 4;
    /**
     * Caller to acceptor, the first frame after the secret handshake: [caller name, caller rank, the largest
     * message the caller accepts, a shared-memory channel's offer (file name, a zero, the nonce; in hex) or
     * null]. The acceptor speaks only when asked, so nothing it sends can reach the
     * caller before the caller reads.
     */
    public static final int OPEN = 5;
    /**
     * Either side, on the socket of a connection whose frames go through shared memory: the sender wrote into the
     * ring while the receiver slept (or freed room the sender waits for). No body.
     */
    public static final int DOORBELL = 6;
    /** The largest frame body before the handshake completes: names and limits only. */
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

    /** The frame of {@code kind} for call {@code id} with {@code body}, on the heap (tests, probes). */
    public static Buffer encode(int kind, long id, byte[] body) {
        return BufferInternal.buffer(header(Unpooled.buffer(HEADER + body.length), kind, 0, id, body.length)
                .writeBytes(body));
    }

    /**
     * The frame of {@code kind} for call {@code id}: header, {@code body}, then the bytes of
     * {@code attachments}, copied now into one direct buffer. Copying snapshots the tensors (a caller may
     * change them as soon as the call is issued), works for memory of any kind, and lets the native
     * transport write the frame without another copy. The caller hands the buffer to
     * {@code NetSocketInternal.writeMessage}, which releases it once written.
     *
     * @throws IllegalArgumentException when the frame would pass 2 GiB
     */
    public static ByteBuf frame(int kind, long id, byte[] body, List<MemorySegment> attachments) {
        long size = (long) HEADER + body.length;
        for (MemorySegment a : attachments) {
            size += a.byteSize();
        }
        if (size > Integer.MAX_VALUE - 8) {
            throw new IllegalArgumentException("a frame of " + size + " bytes is larger than 2 GiB");
        }
        ByteBuf b = ByteBufAllocator.DEFAULT.directBuffer((int) size);
        try {
            header(b, kind, attachments.isEmpty() ? 0 : ATTACHMENTS, id, body.length).writeBytes(body);
            for (MemorySegment a : attachments) {
                int n = (int) a.byteSize();
                MemorySegment.copy(a, 0, MemorySegment.ofBuffer(b.nioBuffer(b.writerIndex(), n)), 0, n);
                b.writerIndex(b.writerIndex() + n);
            }
            return b;
        } catch (RuntimeException | Error e) {
            b.release();
            throw e;
        }
    }

    /**
     * The header of a frame of {@code kind} for call {@code id} whose body is {@code bodyLength} bytes, followed by
     * attachments when {@code attachments} is true: what goes before the body when the frame's parts are written
     * separately (into shared memory).
     */
    public static byte[] header(int kind, long id, int bodyLength, boolean attachments) {
        byte[] h = new byte[HEADER];
        header(Unpooled.wrappedBuffer(h).writerIndex(0), kind, attachments ? ATTACHMENTS : 0, id, bodyLength);
        return h;
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
        return (kind >= WELCOME && kind <= DOORBELL) || (kind >= CALL && kind <= RAISE);
    }
}
