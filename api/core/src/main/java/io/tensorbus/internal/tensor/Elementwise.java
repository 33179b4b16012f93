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

    /**
     * The float32 operators with vector loops: one loop per operator for two runs ({@code vv}) and, except relu's
     * backward, one for a run and a constant {@code b} ({@code vs}: a broadcast bias, scale or mask). Other layouts
     * take the scalar formula.
     */
    private enum Fast {
        ADD(true), SUB(true), MUL(true), DIV(true), RELU_GRAD(false), NONE(false);

        final boolean constantB;

        Fast(boolean constantB) {
            this.constantB = constantB;
        }
    }

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
                        if (fast != Fast.NONE && st[2] == 1 && st[0] == 1 && st[1] <= 1
                                && (st[1] == 1 || fast.constantB)) {
                            // Unit strides, or a constant b along the run (a broadcast bias, scale or mask).
                            vectorF32(fast, op.f(), as, off[0], bs, off[1], st[1] == 0, os, off[2], n);
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
     * {@code out = op(a, b)} over a run of {@code a} and a run or constant of {@code b}: whole vectors in the vector
     * loop, the tail in the scalar formula (they round alike).
     */
    private static void vectorF32(Fast fast, F2 f, MemorySegment as, long ia, MemorySegment bs, long ib,
            boolean bConst, MemorySegment os, long io, int n) {
        int done = bConst ? vs(fast, as, ia, bs.getAtIndex(FL, ib), os, io, n) : vv(fast, as, ia, bs, ib, os, io, n);
        for (int i = done; i < n; i++) {
            os.setAtIndex(FL, io + i, f.apply(as.getAtIndex(FL, ia + i), bs.getAtIndex(FL, bConst ? ib : ib + i)));
        }
    }

    /**
     * One tight loop per operator and layout, chosen before the loop: the Vector API compiles an operation to SIMD
     * only where it is a constant, and a test inside the loop (an operator, a broadcast operand) made C2 copy the
     * loop for every case, 15 KB of code per operator. Each returns how many elements it wrote, whole vectors.
     */
    private static int vv(Fast fast, MemorySegment as, long ia, MemorySegment bs, long ib, MemorySegment os, long io,
            int n) {
        return switch (fast) {
            case ADD -> addVV(as, ia, bs, ib, os, io, n);
            case SUB -> subVV(as, ia, bs, ib, os, io, n);
            case MUL -> mulVV(as, ia, bs, ib, os, io, n);
            case DIV -> divVV(as, ia, bs, ib, os, io, n);
            default -> reluGradVV(as, ia, bs, ib, os, io, n);
        };
    }

    private static int vs(Fast fast, MemorySegment as, long ia, float b, MemorySegment os, long io, int n) {
        return switch (fast) {
            case ADD -> addVS(as, ia, b, os, io, n);
            case SUB -> subVS(as, ia, b, os, io, n);
            case MUL -> mulVS(as, ia, b, os, io, n);
            default -> divVS(as, ia, b, os, io, n);
        };
    }

    private static int addVV(MemorySegment as, long ia, MemorySegment bs, long ib, MemorySegment os, long io, int n) {
        int i = 0;
        for (; i <= n - F.length(); i += F.length()) {
            load(as, ia + i).add(load(bs, ib + i)).intoMemorySegment(os, (io + i) * 4, BO);
        }
        return i;
    }

    private static int subVV(MemorySegment as, long ia, MemorySegment bs, long ib, MemorySegment os, long io, int n) {
        int i = 0;
        for (; i <= n - F.length(); i += F.length()) {
            load(as, ia + i).sub(load(bs, ib + i)).intoMemorySegment(os, (io + i) * 4, BO);
        }
        return i;
    }

    private static int mulVV(MemorySegment as, long ia, MemorySegment bs, long ib, MemorySegment os, long io, int n) {
        int i = 0;
        for (; i <= n - F.length(); i += F.length()) {
            load(as, ia + i).mul(load(bs, ib + i)).intoMemorySegment(os, (io + i) * 4, BO);
        }
        return i;
    }

    private static int divVV(MemorySegment as, long ia, MemorySegment bs, long ib, MemorySegment os, long io, int n) {
        int i = 0;
        for (; i <= n - F.length(); i += F.length()) {
            load(as, ia + i).div(load(bs, ib + i)).intoMemorySegment(os, (io + i) * 4, BO);
        }
        return i;
    }

    /** {@code (grad, output) -> output <= 0 ? 0 : grad}. */
    private static int reluGradVV(MemorySegment as, long ia, MemorySegment bs, long ib, MemorySegment os, long io,
            int n) {
        int i = 0;
        for (; i <= n - F.length(); i += F.length()) {
            FloatVector y = load(bs, ib + i);
            load(as, ia + i).blend(0f, y.compare(VectorOperators.LE, 0f)).intoMemorySegment(os, (io + i) * 4, BO);
        }
        return i;
    }

    private static int addVS(MemorySegment as, long ia, float b, MemorySegment os, long io, int n) {
        FloatVector y = FloatVector.broadcast(F, b);
        int i = 0;
        for (; i <= n - F.length(); i += F.length()) {
            load(as, ia + i).add(y).intoMemorySegment(os, (io + i) * 4, BO);
        }
        return i;
    }

    private static int subVS(MemorySegment as, long ia, float b, MemorySegment os, long io, int n) {
        FloatVector y = FloatVector.broadcast(F, b);
        int i = 0;
        for (; i <= n - F.length(); i += F.length()) {
            load(as, ia + i).sub(y).intoMemorySegment(os, (io + i) * 4, BO);
        }
        return i;
    }

    private static int mulVS(MemorySegment as, long ia, float b, MemorySegment os, long io, int n) {
        FloatVector y = FloatVector.broadcast(F, b);
        int i = 0;
        for (; i <= n - F.length(); i += F.length()) {
            load(as, ia + i).mul(y).intoMemorySegment(os, (io + i) * 4, BO);
        }
        return i;
    }

    private static int divVS(MemorySegment as, long ia, float b, MemorySegment os, long io, int n) {
        FloatVector y = FloatVector.broadcast(F, b);
        int i = 0;
        for (; i <= n - F.length(); i += F.length()) {
            load(as, ia + i).div(y).intoMemorySegment(os, (io + i) * 4, BO);
        }
        return i;
    }

    /** Lanes {@code i..i+F.length()-1} of a float segment at element offset {@code i}. */
    private static FloatVector load(MemorySegment s, long i) {
        return FloatVector.fromMemorySegment(F, s, i * 4, BO);
    }
}
