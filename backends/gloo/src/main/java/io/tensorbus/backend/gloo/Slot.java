package io.tensorbus.backend.gloo;

/**
 * gloo's slots ({@code gloo/types.h}): a collective's messages travel on {@code prefix << 56 | tag << 24}, its
 * prefix naming the collective and its tag the group's collective counter; point-to-point messages travel on the
 * user's tag itself, whose top byte is zero.
 */
final class Slot {
    static final int GATHER = 0x01;
    static final int ALLGATHER = 0x02;
    static final int REDUCE = 0x03;
    static final int ALLREDUCE = 0x04;
    static final int SCATTER = 0x05;
    static final int BROADCAST = 0x06;
    static final int BARRIER = 0x07;
    static final int ALLTOALL = 0x08;

    private static final String[] NAMES = {"send/recv", "gather", "allGather", "reduce", "allReduce", "scatter",
        "broadcast", "barrier", "allToAll"};

    private Slot() {
    }

    /** gloo's {@code Slot::build(prefix, tag)}. */
    static long build(int prefix, long tag) {
        return ((long) prefix << 56) | ((tag & 0xffffffffL) << 24);
    }

    /** The collective prefix of {@code slot}, 0 for a point-to-point slot. */
    static int prefix(long slot) {
        return (int) (slot >>> 56);
    }

    /** The collective counter a collective's slot carries. */
    static long tag(long slot) {
        return (slot >>> 24) & 0xffffffffL;
    }

    /** The name of the collective with {@code prefix}, as our API calls it. */
    static String name(int prefix) {
        return prefix >= 0 && prefix < NAMES.length ? NAMES[prefix] : "collective 0x" + Integer.toHexString(prefix);
    }

    /** The slot as a reader wants it in a message. */
    static String describe(long slot) {
        int prefix = prefix(slot);
        return prefix == 0 ? "send/recv tag " + slot : name(prefix) + " #" + tag(slot);
    }
}
