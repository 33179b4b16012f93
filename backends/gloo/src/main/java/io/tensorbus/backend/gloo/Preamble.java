package io.tensorbus.backend.gloo;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;

/**
 * The 48 bytes before every message on a gloo TCP pair ({@code tcp::Op::preamble}): six native (little-endian)
 * {@code size_t}s. {@code nbytes} counts the preamble and the payload; {@code length} is the payload's size, or
 * for a notice the size of the send or receive it announces. gloo's unbound buffers leave {@code offset} and
 * {@code roffset} zero.
 *
 * @param nbytes the preamble's and payload's bytes together
 * @param opcode one of {@link #SEND_BUFFER}, {@link #SEND_UNBOUND_BUFFER}, {@link #NOTIFY_SEND_READY},
 *               {@link #NOTIFY_RECV_READY}
 * @param slot the slot the message belongs to
 * @param offset the sender's offset (pinned buffers only)
 * @param length the payload's or the announced operation's size in bytes
 * @param roffset the receiver's offset (pinned buffers only)
 */
record Preamble(long nbytes, long opcode, long slot, long offset, long length, long roffset) {
    /** Its size on the wire. */
    static final int BYTES = 48;
    /** Data for a pinned buffer; gloo's collectives of PyTorch never send these. */
    static final int SEND_BUFFER = 0;
    /** Data for the receive the peer announced first. */
    static final int SEND_UNBOUND_BUFFER = 1;
    /** The sender has a send of {@code length} bytes on {@code slot}. */
    static final int NOTIFY_SEND_READY = 2;
    /** The receiver has posted a receive of {@code length} bytes on {@code slot}. */
    static final int NOTIFY_RECV_READY = 3;

    /** A notice of a posted send or receive. */
    static Preamble notice(int opcode, long slot, long length) {
        return new Preamble(BYTES, opcode, slot, 0, length, 0);
    }

    /** The header of {@code length} bytes of data for the peer's oldest announced receive on {@code slot}. */
    static Preamble data(long slot, long length) {
        return new Preamble(BYTES + length, SEND_UNBOUND_BUFFER, slot, 0, length, 0);
    }

    /** The 48 bytes as gloo writes them. */
    ByteBuf encode() {
        ByteBuf b = Unpooled.buffer(BYTES, BYTES);
        b.writeLongLE(nbytes).writeLongLE(opcode).writeLongLE(slot).writeLongLE(offset).writeLongLE(length)
                .writeLongLE(roffset);
        return b;
    }

    /**
     * Reads 48 bytes from {@code bytes}.
     *
     * @throws IllegalArgumentException when the opcode is not one of gloo's four or the sizes disagree
     */
    static Preamble decode(ByteBuf bytes) {
        Preamble p = new Preamble(bytes.readLongLE(), bytes.readLongLE(), bytes.readLongLE(), bytes.readLongLE(),
                bytes.readLongLE(), bytes.readLongLE());
        if (p.opcode < 0 || p.opcode > NOTIFY_RECV_READY) {
            throw new IllegalArgumentException("unknown gloo opcode " + p.opcode);
        }
        boolean data = p.opcode == SEND_BUFFER || p.opcode == SEND_UNBOUND_BUFFER;
        long expected = data ? BYTES + p.length : BYTES;
        if (p.length < 0 || p.nbytes != expected) {
            throw new IllegalArgumentException("gloo preamble of opcode " + p.opcode + " says nbytes=" + p.nbytes
                    + " and length=" + p.length);
        }
        return p;
    }
}
