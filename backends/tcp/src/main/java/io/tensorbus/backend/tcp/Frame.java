package io.tensorbus.backend.tcp;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.tensorbus.DType;
import io.tensorbus.c10d.ReduceOp;

/**
 * The data-plane frame header: 72 bytes, little-endian, followed by {@code payloadBytes} raw bytes.
 *
 * <pre>
 *  0 u32 magic 'TBUS'      4 u8 version   5 u8 kind   6 u8 opcode   7 u8 dtype ordinal
 *  8 u8 reduce op (255 none) 9-11 zero    12 i32 root
 * 16 i64 sequence (collective number in the group; -1 for point-to-point)
 * 24 i64 tag (point-to-point: the user's tag; collectives: the algorithm's step and chunk)
 * 32 i64 op numel           40 i32 shape hash          44 i32 group hash
 * 48 i64 payload bytes      56 i64 aux (hello: rank and world size; status: a sequence number)
 * 64 i64 zero (reserved)
 * </pre>
 * Opcode, dtype, reduce op, root, numel and shape hash are the collective's fingerprint: every frame of a
 * collective carries its sender's call, so the receiver detects a mismatched call at the first frame.
 */
record Frame(int kind, int opcode, int dtype, int reduceOp, int root, long sequence, long tag, long opNumel,
             int shapeHash, int groupHash, long payloadBytes, long aux) {

    static final int MAGIC = 0x53554254; // "TBUS" read little-endian
    static final int VERSION = 2;
    static final int HEADER_BYTES = 72;
    static final int HELLO = 1;
    static final int DATA = 2;
    static final int STATUS_REQUEST = 3;
    static final int STATUS_REPLY = 4;
    /** A rank gives up on the group (aux: a mismatch it saw, or its own failure); the payload is its UTF-8 message. */
    static final int ABORT = 5;
    /** aux of an ABORT: the sender found a collective mismatch. */
    static final long ABORT_MISMATCH = 0;
    /** aux of an ABORT: the sender's group failed (a lost peer, a timeout) and it leaves; the text says why. */
    static final long ABORT_FAILED = 1;
    static final int MAX_ABORT_BYTES = 64 * 1024;
    /** A rank leaves the group in order; aux is how many collectives it called (all of them finished). */
    static final int GOODBYE = 6;
    /**
     * Right after its HELLO, the accepting rank offers a {@link io.tensorbus.spi.support.shm.SharedMemoryChannel} (the
     * connector's HELLO had {@link #WANTS_SHARED_MEMORY}); the payload names the file and carries its nonce.
     */
    static final int SHM_OFFER = 7;
    /**
     * The connector's answer to a SHM_OFFER: aux 1 when it mapped the channel (frames go there from now on), 0 when
     * not.
     */
    static final int SHM_ANSWER = 8;
    /** Over the socket of a shared-memory connection: the peer wrote or freed room while this side slept. */
    static final int DOORBELL = 9;
    /**
     * tag of a HELLO: the sender is on the receiver's host (by {@link
     * io.tensorbus.spi.support.shm.SharedMemoryChannel#hostIdentity}) and wants shared memory.
     */
    static final long WANTS_SHARED_MEMORY = 1;
    /** The largest SHM_OFFER payload. */
    static final int MAX_OFFER_BYTES = 256;
    static final int NO_REDUCE = 255;
    /** Larger payloads are refused as malformed: 1 TiB is beyond any tensor a host sends in one message. */
    static final long MAX_PAYLOAD = 1L << 40;

    /** True for a point-to-point message, matched by (source, tag) instead of (sequence, tag). */
    boolean isPointToPoint() {
        return sequence < 0;
    }

    /** Writes this header into a new 72-byte buffer. */
    ByteBuf encode() {
        // Pooled: a fresh direct buffer per frame costs more than the small write it carries.
        ByteBuf b = ByteBufAllocator.DEFAULT.directBuffer(HEADER_BYTES, HEADER_BYTES);
        b.writeIntLE(MAGIC).writeByte(VERSION).writeByte(kind).writeByte(opcode).writeByte(dtype);
        b.writeByte(reduceOp).writeByte(0).writeShort(0).writeIntLE(root);
        b.writeLongLE(sequence).writeLongLE(tag).writeLongLE(opNumel);
        b.writeIntLE(shapeHash).writeIntLE(groupHash);
        b.writeLongLE(payloadBytes).writeLongLE(aux).writeLongLE(0);
        return b;
    }

    /**
     * Reads a header from exactly {@link #HEADER_BYTES} readable bytes.
     *
     * @throws MalformedFrameException when the magic, version, kind or sizes are wrong
     */
    static Frame decode(ByteBuf b) {
        int magic = b.readIntLE();
        if (magic != MAGIC) {
            throw new MalformedFrameException(String.format("bad magic 0x%08x (expected 0x%08x)", magic, MAGIC));
        }
        int version = b.readUnsignedByte();
        if (version != VERSION) {
            throw new MalformedFrameException("protocol version " + version + ", this process speaks " + VERSION);
        }
        int kind = b.readUnsignedByte();
        int opcode = b.readUnsignedByte();
        int dtype = b.readUnsignedByte();
        int reduceOp = b.readUnsignedByte();
        b.skipBytes(3);
        Frame f = new Frame(kind, opcode, dtype, reduceOp, b.readIntLE(), b.readLongLE(), b.readLongLE(),
                b.readLongLE(), b.readIntLE(), b.readIntLE(), b.readLongLE(), b.readLongLE());
        b.skipBytes(8);
        f.validate();
        return f;
    }

    private void validate() {
        if (kind < HELLO || kind > DOORBELL) {
            throw new MalformedFrameException("unknown frame kind " + kind);
        }
        if (payloadBytes < 0 || payloadBytes > MAX_PAYLOAD
                || (kind != DATA && kind != ABORT && kind != SHM_OFFER && payloadBytes != 0)
                || (kind == ABORT && payloadBytes > MAX_ABORT_BYTES)
                || (kind == SHM_OFFER && payloadBytes > MAX_OFFER_BYTES)) {
            throw new MalformedFrameException("payload of " + payloadBytes + " bytes in a frame of kind " + kind);
        }
        if ((kind == DATA || kind == STATUS_REPLY) && (dtype >= DType.values().length
                || (reduceOp != NO_REDUCE && reduceOp >= ReduceOp.Type.values().length))) {
            throw new MalformedFrameException("dtype " + dtype + " or reduce op " + reduceOp + " out of range");
        }
    }

    /** A frame that breaks the protocol: the connection that carried it is closed. */
    static final class MalformedFrameException extends RuntimeException {
        MalformedFrameException(String message) {
            super(message);
        }
    }
}
