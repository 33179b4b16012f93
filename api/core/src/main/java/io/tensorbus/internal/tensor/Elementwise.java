package io.tensorbus.internal.tensor;

import io.tensorbus.DType;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * Elementwise kernels on strided operands: one float, one double and one long version of each formula,
 * chosen by the compute dtype. float32 add/sub/mul/div on unit strides use the Vector API.
 */
public final class Elementwise {
    private static final VectorSpecies<Float> F = FloatVector.SPECIES_PREFERRED;
    private static final ValueLayout.OfFloat FL = ValueLayout.JAVA_FLOAT;
    private static final ByteOrder BO = ByteOrder.nativeOrder();
    private static final ValueLayout.OfDouble DL = ValueLayout.JAVA_DOUBLE;

    private Elementwise() {
    }

    /** A formula on floats. */
    @FunctionalInterface
    public interface F1 {
        /** Applies the formula. */
        float apply(float x);
    }

    /** A formula on doubles. */
    @FunctionalInterface
    public interface D1 {
        /** Applies the formula. */
        double apply(double x);
    }

    /** A formula on longs (int32, int64 and bool compute as long). */
    @FunctionalInterface
    public interface L1 {
        /** Applies the formula. */
        long apply(long x);
    }

    /** A two-operand formula on floats. */
    @FunctionalInterface
    public interface F2 {
        /** Applies the formula. */
        float apply(float a, float b);
    }

    /** A two-operand formula on doubles. */
    @FunctionalInterface
    public interface D2 {
        /** Applies the formula. */
        double apply(double a, double b);
    }

    /** A two-operand formula on longs. */
    @FunctionalInterface
    public interface L2 {
        /** Applies the formula. */
        long apply(long a, long b);
    }

    /**
     * A unary formula in each compute family; {@code l} may be null where integers are not allowed, and
     * {@code vectorF32}, when present, is a vectorised float32 loop for unit strides.
     */
    public record Unary(String name, F1 f, D1 d, L1 l, FloatKernels.Loop vectorF32) {
        /** A formula without a vectorised loop. */
        public Unary(String name, F1 f, D1 d, L1 l) {
            this(name, f, d, l, null);
        }
    }

    /** A binary formula in each compute family; {@code l} may be null where integers are not allowed. */
    public record Binary(String name, F2 f, D2 d, L2 l) {
    }

    /** Vector fast path selector for float32 unit-stride binary ops. */
    private enum Fast { ADD, SUB, MUL, DIV, RELU_GRAD, NONE }

    /**
     * The name of the binary op {@code (grad, output) -> output <= 0 ? 0 : grad}, relu's backward (PyTorch's
     * {@code threshold_backward}), which has a vector fast path here.
     */
    public static final String RELU_GRAD = "reluGrad";

    /**
     * out = op(a) over {@code shape}; {@code a} and {@code out} share the compute dtype {@code out.dtype()}
     * (comparisons aside, callers convert first).
     */
    public static void unary(Unary op, Strided.View a, Strided.View out, int[] shape, boolean contiguous) {
        DType t = a.dtype();
        MemorySegment as = a.segment();
        MemorySegment os = out.segment();
        NdLoop.forEach(shape, new long[] {a.offset(), out.offset()}, new int[][] {a.strides(), out.strides()},
                contiguous, (off, st, n) -> {
                    long ia = off[0];
                    long io = off[1];
                    switch (t) {
                        case FLOAT32 -> {
                            if (op.vectorF32() != null && st[0] == 1 && st[1] == 1) {
                                op.vectorF32().run(as, ia, os, io, n);
                                return;
                            }
                            for (int i = 0; i < n; i++, ia += st[0], io += st[1]) {
                                os.setAtIndex(FL, io, op.f().apply(as.getAtIndex(FL, ia)));
                            }
                        }
                        case FLOAT64 -> {
                            for (int i = 0; i < n; i++, ia += st[0], io += st[1]) {
                                os.setAtIndex(DL, io, op.d().apply(as.getAtIndex(DL, ia)));
                            }
                        }
                        default -> {
                            for (int i = 0; i < n; i++, ia += st[0], io += st[1]) {
                                Access.setLong(os, out.dtype(), io, op.l().apply(Access.getLong(as, t, ia)));
                            }
                        }
                    }
                });
    }

    /**
     * out = op(a, b) over {@code shape}; {@code a} and {@code b} have the compute dtype, {@code out} has it
     * too or is bool (comparisons, which write 1 for a non-zero result).
     */
    public static void binary(Binary op, Strided.View a, Strided.View b, Strided.View out, int[] shape,
            boolean contiguous) {
        DType t = a.dtype();
        MemorySegment as = a.segment();
        MemorySegment bs = b.segment();
        MemorySegment os = out.segment();
        DType ot = out.dtype();
        Fast fast = ot == DType.FLOAT32 ? fastOf(op) : Fast.NONE;
        NdLoop.forEach(shape, new long[] {a.offset(), b.offset(), out.offset()},
                new int[][] {a.strides(), b.strides(), out.strides()}, contiguous, (off, st, n) -> {
                    if (ot != t) {
                        loopToOther(op, t, as, bs, os, ot, off, st, n);
                    } else if (t == DType.FLOAT32) {
                        if (fast != Fast.NONE && st[2] == 1 && st[0] <= 1 && st[1] <= 1) {
                            // Unit strides, or one operand constant along the run (a broadcast bias or mask).
                            vectorF32(fast, as, off[0], st[0] == 0, bs, off[1], st[1] == 0, os, off[2], n);
                        } else {
                            loopF32(op.f(), as, bs, os, off, st, n);
                        }
                    } else if (t == DType.FLOAT64) {
                        loopF64(op.d(), as, bs, os, off, st, n);
                    } else {
                        loopLong(op.l(), t, as, bs, os, ot, off, st, n);
                    }
                });
    }

    private static Fast fastOf(Binary op) {
        return switch (op.name()) {
            case "add" -> Fast.ADD;
            case "sub" -> Fast.SUB;
            case "mul" -> Fast.MUL;
            case "div" -> Fast.DIV;
            case RELU_GRAD -> Fast.RELU_GRAD;
            default -> Fast.NONE;
        };
    }

    private static void loopF32(F2 f, MemorySegment as, MemorySegment bs, MemorySegment os, long[] off, int[] st,
            int n) {
        long ia = off[0];
        long ib = off[1];
        long io = off[2];
        for (int i = 0; i < n; i++, ia += st[0], ib += st[1], io += st[2]) {
            os.setAtIndex(FL, io, f.apply(as.getAtIndex(FL, ia), bs.getAtIndex(FL, ib)));
        }
    }

    private static void loopF64(D2 f, MemorySegment as, MemorySegment bs, MemorySegment os, long[] off, int[] st,
            int n) {
        long ia = off[0];
        long ib = off[1];
        long io = off[2];
        for (int i = 0; i < n; i++, ia += st[0], ib += st[1], io += st[2]) {
            os.setAtIndex(DL, io, f.apply(as.getAtIndex(DL, ia), bs.getAtIndex(DL, ib)));
        }
    }

    private static void loopLong(L2 f, DType t, MemorySegment as, MemorySegment bs, MemorySegment os, DType ot,
            long[] off, int[] st, int n) {
        long ia = off[0];
        long ib = off[1];
        long io = off[2];
        for (int i = 0; i < n; i++, ia += st[0], ib += st[1], io += st[2]) {
            Access.setLong(os, ot, io, f.apply(Access.getLong(as, t, ia), Access.getLong(bs, t, ib)));
        }
    }

    private static void loopToOther(Binary op, DType t, MemorySegment as, MemorySegment bs, MemorySegment os,
            DType ot, long[] off, int[] st, int n) {
        long ia = off[0];
        long ib = off[1];
        long io = off[2];
        for (int i = 0; i < n; i++, ia += st[0], ib += st[1], io += st[2]) {
            if (t.isFloatingPoint()) {
                double r = op.d().apply(Access.getDouble(as, t, ia), Access.getDouble(bs, t, ib));
                Access.setDouble(os, ot, io, r);
            } else {
                Access.setLong(os, ot, io, op.l().apply(Access.getLong(as, t, ia), Access.getLong(bs, t, ib)));
            }
        }
    }

    /**
     * One tight loop per operator, chosen before the loop: the Vector API compiles an operation to SIMD only where
     * it is a constant, and a switch inside the loop made one large method that C2 compiled again for every
     * operator it met later (its largest compilation in a training rank).
     */
    private static void vectorF32(Fast fast, MemorySegment as, long ia, boolean aConst, MemorySegment bs, long ib,
            boolean bConst, MemorySegment os, long io, int n) {
        int done = switch (fast) {
            case ADD -> addF32(as, ia, aConst, bs, ib, bConst, os, io, n);
            case SUB -> subF32(as, ia, aConst, bs, ib, bConst, os, io, n);
            case MUL -> mulF32(as, ia, aConst, bs, ib, bConst, os, io, n);
            case RELU_GRAD -> reluGradF32(as, ia, aConst, bs, ib, bConst, os, io, n);
            default -> divF32(as, ia, aConst, bs, ib, bConst, os, io, n);
        };
        for (int i = done; i < n; i++) {
            float x = as.getAtIndex(FL, aConst ? ia : ia + i);
            float y = bs.getAtIndex(FL, bConst ? ib : ib + i);
            os.setAtIndex(FL, io + i, switch (fast) {
                case ADD -> x + y;
                case SUB -> x - y;
                case MUL -> x * y;
                case RELU_GRAD -> y <= 0 ? 0f : x;
                default -> x / y;
            });
        }
    }

    // Each returns how many elements it wrote: the whole vectors; vectorF32 finishes the tail.

    private static int addF32(MemorySegment as, long ia, boolean aConst, MemorySegment bs, long ib, boolean bConst,
            MemorySegment os, long io, int n) {
        int i = 0;
        for (; i <= n - F.length(); i += F.length()) {
            operand(as, ia, aConst, i).add(operand(bs, ib, bConst, i)).intoMemorySegment(os, (io + i) * 4, BO);
        }
        return i;
    }

    private static int subF32(MemorySegment as, long ia, boolean aConst, MemorySegment bs, long ib, boolean bConst,
            MemorySegment os, long io, int n) {
        int i = 0;
        for (; i <= n - F.length(); i += F.length()) {
            operand(as, ia, aConst, i).sub(operand(bs, ib, bConst, i)).intoMemorySegment(os, (io + i) * 4, BO);
        }
        return i;
    }

    private static int mulF32(MemorySegment as, long ia, boolean aConst, MemorySegment bs, long ib, boolean bConst,
            MemorySegment os, long io, int n) {
        int i = 0;
        for (; i <= n - F.length(); i += F.length()) {
            operand(as, ia, aConst, i).mul(operand(bs, ib, bConst, i)).intoMemorySegment(os, (io + i) * 4, BO);
        }
        return i;
    }

    private static int divF32(MemorySegment as, long ia, boolean aConst, MemorySegment bs, long ib, boolean bConst,
            MemorySegment os, long io, int n) {
        int i = 0;
        for (; i <= n - F.length(); i += F.length()) {
            operand(as, ia, aConst, i).div(operand(bs, ib, bConst, i)).intoMemorySegment(os, (io + i) * 4, BO);
        }
        return i;
    }

    /** {@code (grad, output) -> output <= 0 ? 0 : grad}. */
    private static int reluGradF32(MemorySegment as, long ia, boolean aConst, MemorySegment bs, long ib,
            boolean bConst, MemorySegment os, long io, int n) {
        int i = 0;
        for (; i <= n - F.length(); i += F.length()) {
            FloatVector y = operand(bs, ib, bConst, i);
            FloatVector r = operand(as, ia, aConst, i).blend(0f, y.compare(VectorOperators.LE, 0f));
            r.intoMemorySegment(os, (io + i) * 4, BO);
        }
        return i;
    }

    /** Lanes {@code i..} of an operand, or its one element in every lane where it is constant along the run. */
    private static FloatVector operand(MemorySegment s, long off, boolean constant, int i) {
        return constant ? FloatVector.broadcast(F, s.getAtIndex(FL, off))
                : FloatVector.fromMemorySegment(F, s, (off + i) * 4, BO);
    }
}
