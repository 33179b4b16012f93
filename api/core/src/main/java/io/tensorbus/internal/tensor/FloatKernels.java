package io.tensorbus.internal.tensor;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * Vectorised float32 loops for the unary functions training runs most (activations, their masks and
 * exponentials), over unit-stride runs. Each loop is its own method so that the JIT compiles it with the
 * vector operations inlined; {@link Elementwise} falls back to the scalar formula elsewhere.
 */
public final class FloatKernels {
    private static final VectorSpecies<Float> F = FloatVector.SPECIES_PREFERRED;
    private static final ByteOrder ORDER = ByteOrder.nativeOrder();
    private static final ValueLayout.OfFloat FL = ValueLayout.JAVA_FLOAT;

    private FloatKernels() {
    }

    /** A float32 loop over {@code n} elements from element offsets {@code ia} (input) and {@code io} (output). */
    @FunctionalInterface
    public interface Loop {
        /** Runs the loop. */
        void run(MemorySegment in, long ia, MemorySegment out, long io, int n);
    }

    /**
     * {@code out = a + alpha * b} over {@code n} floats in one fused multiply-add per element, as PyTorch's
     * {@code add(a, b, alpha=...)} computes it on the CPU; {@code out} may be {@code a} (an in-place update).
     */
    public static void addScaled(MemorySegment a, long ia, MemorySegment b, long ib, float alpha, MemorySegment out,
                                 long io, int n) {
        int i = 0;
        FloatVector s = FloatVector.broadcast(F, alpha);
        for (; i <= n - F.length(); i += F.length()) {
            FloatVector y = FloatVector.fromMemorySegment(F, b, (ib + i) * 4, ORDER);
            y.fma(s, FloatVector.fromMemorySegment(F, a, (ia + i) * 4, ORDER)).intoMemorySegment(out, (io + i) * 4,
                    ORDER);
        }
        for (; i < n; i++) {
            out.setAtIndex(FL, io + i, Math.fma(b.getAtIndex(FL, ib + i), alpha, a.getAtIndex(FL, ia + i)));
        }
    }

    /** {@code out = in + c} over {@code n} floats; {@code out} may be {@code in}. */
    public static void addScalar(MemorySegment in, long ia, float c, MemorySegment out, long io, int n) {
        int i = 0;
        FloatVector s = FloatVector.broadcast(F, c);
        for (; i <= n - F.length(); i += F.length()) {
            FloatVector.fromMemorySegment(F, in, (ia + i) * 4, ORDER).add(s).intoMemorySegment(out, (io + i) * 4,
                    ORDER);
        }
        for (; i < n; i++) {
            out.setAtIndex(FL, io + i, in.getAtIndex(FL, ia + i) + c);
        }
    }

    /** {@code max(x, 0)}, NaN passing through. */
    public static void relu(MemorySegment in, long ia, MemorySegment out, long io, int n) {
        int i = 0;
        FloatVector zero = FloatVector.zero(F);
        for (; i <= n - F.length(); i += F.length()) {
            FloatVector x = FloatVector.fromMemorySegment(F, in, (ia + i) * 4, ORDER);
            x.blend(zero, x.compare(VectorOperators.LE, 0f)).intoMemorySegment(out, (io + i) * 4, ORDER);
        }
        for (; i < n; i++) {
            float x = in.getAtIndex(FL, ia + i);
            out.setAtIndex(FL, io + i, x <= 0 ? 0f : x);
        }
    }

    /** {@code e^x}. */
    public static void exp(MemorySegment in, long ia, MemorySegment out, long io, int n) {
        lanewise(VectorOperators.EXP, in, ia, out, io, n);
    }

    /** {@code ln x}. */
    public static void log(MemorySegment in, long ia, MemorySegment out, long io, int n) {
        lanewise(VectorOperators.LOG, in, ia, out, io, n);
    }

    /** {@code tanh x}. */
    public static void tanh(MemorySegment in, long ia, MemorySegment out, long io, int n) {
        lanewise(VectorOperators.TANH, in, ia, out, io, n);
    }

    /** {@code sqrt x}. */
    public static void sqrt(MemorySegment in, long ia, MemorySegment out, long io, int n) {
        lanewise(VectorOperators.SQRT, in, ia, out, io, n);
    }

    private static void lanewise(VectorOperators.Unary op, MemorySegment in, long ia, MemorySegment out, long io,
            int n) {
        int i = 0;
        for (; i <= n - F.length(); i += F.length()) {
            FloatVector.fromMemorySegment(F, in, (ia + i) * 4, ORDER).lanewise(op)
                    .intoMemorySegment(out, (io + i) * 4, ORDER);
        }
        if (i < n) {
            // The tail through a masked vector, so it rounds exactly as the body.
            var mask = F.indexInRange(i, n);
            FloatVector.fromMemorySegment(F, in, (ia + i) * 4, ORDER, mask).lanewise(op)
                    .intoMemorySegment(out, (io + i) * 4, ORDER, mask);
        }
    }
}
