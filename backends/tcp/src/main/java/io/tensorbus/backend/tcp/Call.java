package io.tensorbus.backend.tcp;

import io.tensorbus.DType;
import io.tensorbus.c10d.ReduceOp;
import java.util.Arrays;

/**
 * One collective call as the caller made it: the fingerprint every frame of the collective carries, and its
 * readable description for error messages ({@code allReduce(float32[2, 3], SUM)}).
 *
 * @param opcode which collective
 * @param dtype the element type of the buffers the fingerprint describes
 * @param reduceOp the reduction, or null
 * @param root the root rank, or -1
 * @param numel the element count described, or -1 when ranks may legitimately differ (all-to-all)
 * @param shape the shape described, or null when ranks may legitimately differ
 */
record Call(Opcode opcode, DType dtype, ReduceOp reduceOp, int root, long numel, long[] shape) {

    /** A hash of the shape that a frame can carry (0 when the shape is not part of the fingerprint). */
    int shapeHash() {
        return shape == null ? 0 : Arrays.hashCode(shape);
    }

    /** True when {@code f}, a frame of the same sequence number, was sent for the same call. */
    boolean matches(Frame f) {
        return f.opcode() == opcode.code && f.dtype() == dtype.ordinal() && f.reduceOp() == reduceOpCode()
                && f.root() == root && f.opNumel() == numel && f.shapeHash() == shapeHash();
    }

    int reduceOpCode() {
        return reduceOp == null ? Frame.NO_REDUCE : reduceOp.code();
    }

    /** The header of a data frame of this call. */
    Frame frame(long sequence, long tag, long payloadBytes, int groupHash) {
        return new Frame(Frame.DATA, opcode.code, dtype.ordinal(), reduceOpCode(), root, sequence, tag, numel,
                shapeHash(), groupHash, payloadBytes, 0);
    }

    /** Bit of an announcement's second word: the call runs in the group's shared area. */
    private static final long ON_AREA = 1L << 56;

    /**
     * This call in the words of a shared-memory announcement: numel; opcode, dtype, reduction, root and whether it
     * runs {@code onArea}; shape hash.
     */
    long[] announcement(boolean onArea) {
        return new long[] {numel, (long) opcode.code << 48 | (long) dtype.ordinal() << 40
                | (long) (reduceOpCode() & 0xff) << 32 | (root & 0xffffffffL) | (onArea ? ON_AREA : 0), shapeHash()};
    }

    /** True when a peer's {@link #announcement} says it made the same call in the shared area. */
    boolean matches(long[] announced) {
        return Arrays.equals(announcement(true), announced);
    }

    /** True when an announcement is of a call in the shared area. */
    static boolean onArea(long[] announced) {
        return (announced[1] & ON_AREA) != 0;
    }

    /** True when two announcements are of the same call, wherever it runs. */
    static boolean sameCall(long[] a, long[] b) {
        return a[0] == b[0] && (a[1] & ~ON_AREA) == (b[1] & ~ON_AREA) && a[2] == b[2];
    }

    /** What an announcement says its maker called (numel instead of the shape). */
    static String describe(long[] announced) {
        long w = announced[1];
        return describe((int) (w >>> 48 & 0xff), (int) (w >>> 40 & 0xff), (int) (w >>> 32 & 0xff), (int) w,
                announced[0]);
    }

    /** For example {@code allReduce(float32[1024], SUM)} or {@code broadcast(int64[3], root=1)}. */
    String describe() {
        String what = shape == null ? dtype.toString() : dtype + Arrays.toString(shape);
        return opcode.javaName + "(" + what + (reduceOp == null ? "" : ", " + reduceOp)
                + (root < 0 ? "" : ", root=" + root) + ")";
    }

    /** What a frame says its sender called, as far as the header tells (numel instead of the shape). */
    static String describe(Frame f) {
        return describe(f.opcode(), f.dtype(), f.reduceOp(), f.root(), f.opNumel());
    }

    private static String describe(int opcode, int dtypeCode, int reduceOp, int root, long numel) {
        Opcode op = Opcode.of(opcode);
        String dtype = dtypeCode < DType.values().length ? DType.values()[dtypeCode].toString() : "dtype#" + dtypeCode;
        String what = numel < 0 ? dtype : dtype + " with " + numel + " elements";
        ReduceOp.Type[] types = ReduceOp.Type.values();
        String reduce = reduceOp == Frame.NO_REDUCE ? ""
                : ", " + (reduceOp < types.length ? types[reduceOp] : "op#" + reduceOp);
        return (op == null ? "op#" + opcode : op.javaName) + "(" + what + reduce + (root < 0 ? "" : ", root=" + root)
                + ")";
    }
}
