package io.tensorbus.backend.gloo;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;

/**
 * What a rank publishes under {@code 0/<rank>} in gloo's rendezvous from 6d8b511 on ({@code tcp::Rank}, PyTorch 2.2
 * and later): its host name, its group's listening address, and for every rank of the group (itself included) the
 * sequence number that rank's pair must name when it dials. Encoded as gloo's {@code Rank::bytes}: a native
 * {@code size_t} length and the host name, a {@code size_t} length and the address bytes, then one native
 * {@code ssize_t} per rank. A gloo that numbers pairs by rank ({@code GLOO_ENABLE_RANK_AS_SEQUENCE_NUMBER=1}, or
 * lazy init) publishes none: then the pair with rank r answers to r ({@link #seqFor}).
 *
 * @param hostName gethostname(2) of the rank
 * @param address the listening socket's address, sequence number unset (-1)
 * @param seqs per rank of the group, the sequence number its pair with this rank names; empty when they are the ranks
 */
record RankInfo(String hostName, GlooAddress address, long[] seqs) {
    /** The longest host name accepted from a peer (HOST_NAME_MAX is 64 on Linux; gloo's buffer is 1024). */
    private static final int MAX_HOST_NAME = 1024;

    RankInfo {
        seqs = seqs.clone();
    }

    /** gloo's {@code Rank::bytes}. */
    byte[] bytes() {
        byte[] host = hostName.getBytes(StandardCharsets.UTF_8);
        ByteBuffer b = ByteBuffer.allocate(8 + host.length + 8 + GlooAddress.BYTES + 8 * seqs.length)
                .order(ByteOrder.LITTLE_ENDIAN);
        b.putLong(host.length).put(host).putLong(GlooAddress.BYTES).put(address.bytes());
        for (long seq : seqs) {
            b.putLong(seq);
        }
        return b.array();
    }

    /**
     * Reads gloo's {@code Rank} of a group of {@code size} ranks.
     *
     * @throws IllegalArgumentException naming what is wrong when the bytes are not one
     */
    static RankInfo parse(byte[] bytes, int size) {
        ByteBuffer b = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
        long hostLength = length(b, MAX_HOST_NAME, "host name");
        byte[] host = new byte[(int) hostLength];
        b.get(host);
        long addressLength = length(b, GlooAddress.BYTES, "address");
        if (addressLength != GlooAddress.BYTES) {
            throw new IllegalArgumentException("a gloo rank record's address has " + addressLength + " bytes, not "
                    + GlooAddress.BYTES);
        }
        GlooAddress address = GlooAddress.parse(bytes, b.position(), "a gloo rank record ends inside its address");
        b.position(b.position() + GlooAddress.BYTES);
        if (b.remaining() != 8L * size && b.hasRemaining()) {
            throw new IllegalArgumentException("a gloo rank record carries " + b.remaining() + " bytes of sequence"
                    + " numbers; a group of " + size + " needs " + 8L * size + " (or none, numbered by rank)");
        }
        long[] seqs = new long[b.remaining() / 8];
        for (int i = 0; i < seqs.length; i++) {
            seqs[i] = b.getLong();
        }
        return new RankInfo(new String(host, StandardCharsets.UTF_8), address, seqs);
    }

    /** The sequence number this record's rank expects from the pair with {@code rank}. */
    long seqFor(int rank) {
        return seqs.length == 0 ? rank : seqs[rank];
    }

    private static long length(ByteBuffer b, int max, String what) {
        if (b.remaining() < 8) {
            throw new IllegalArgumentException("a gloo rank record ends before its " + what + "'s length");
        }
        long n = b.getLong();
        if (n < 0 || n > max || n > b.remaining()) {
            throw new IllegalArgumentException("a gloo rank record's " + what + " of " + Long.toUnsignedString(n)
                    + " bytes (at most " + Math.min(max, b.remaining()) + " fit)");
        }
        return n;
    }
}
