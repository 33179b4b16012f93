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

    /** For example {@code allReduce(float32[1024], SUM)} or {@code broadcast(int64[3], root=1)}. */
    String describe() {
        String what = shape == null ? dtype.toString() : dtype + Arrays.toString(shape);
        return opcode.javaName + "(" + what + (reduceOp == null ? "" : ", " + reduceOp)
                + (root < 0 ? "" : ", root=" + root) + ")";
    }

    /** What a frame says its sender called, as far as the header tells (numel instead of the shape). */
    static String describe(Frame f) {
        Opcode op = Opcode.of(f.opcode());
        String dtype = f.dtype() < DType.values().length ? DType.values()[f.dtype()].toString() : "dtype#" + f.dtype();
        String what = f.opNumel() < 0 ? dtype : dtype + " with " + f.opNumel() + " elements";
        String reduce = f.reduceOp() == Frame.NO_REDUCE ? "" : ", " + ReduceOp.Type.values()[f.reduceOp()];
        return (op == null ? "op#" + f.opcode() : op.javaName) + "(" + what + reduce
                + (f.root() < 0 ? "" : ", root=" + f.root()) + ")";
    }
}
