package io.tensorbus.backend.gloo;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.tensorbus.DType;
import io.tensorbus.c10d.ReduceOp;
import java.lang.foreign.MemorySegment;
import org.junit.jupiter.api.Test;

/** gloo's {@code std::min(a, b)} and {@code std::max(a, b)}: the local {@code a} stays unless {@code b} wins. */
class GlooMinMaxTest {
    @Test
    void theLocalValueStaysWhereNaNsOrSignedZerosMeet() {
        double nan = Double.NaN;
        double[] acc = {nan, 1, 0.0, -0.0, 3};
        double[] src = {1, nan, -0.0, 0.0, 2};
        GlooMinMax.reduceInto(ReduceOp.MIN, DType.FLOAT64, MemorySegment.ofArray(acc), MemorySegment.ofArray(src));
        assertArrayEquals(new long[] {bits(nan), bits(1), bits(0.0), bits(-0.0), bits(2)}, bitsOf(acc));
        double[] acc2 = {nan, 1, 0.0, -0.0, 3};
        GlooMinMax.reduceInto(ReduceOp.MAX, DType.FLOAT64, MemorySegment.ofArray(acc2), MemorySegment.ofArray(src));
        assertArrayEquals(new long[] {bits(nan), bits(1), bits(0.0), bits(-0.0), bits(3)}, bitsOf(acc2));
    }

    @Test
    void halvesAreComparedAsFloatsAndCopiedAsBits() {
        short[] acc = {0x0000, 0x3c00, 0x7e01};       // +0, 1, a NaN with a payload
        short[] src = {(short) 0x8000, 0x3800, 0x0000}; // -0, 0.5, +0
        GlooMinMax.reduceInto(ReduceOp.MIN, DType.FLOAT16, MemorySegment.ofArray(acc), MemorySegment.ofArray(src));
        assertArrayEquals(new short[] {0x0000, 0x3800, 0x7e01}, acc);
    }

    @Test
    void onlyFloatingPointMinAndMaxAreGloosRule() {
        assertFalse(GlooMinMax.handles(ReduceOp.MIN, DType.INT32));
        assertFalse(GlooMinMax.handles(ReduceOp.SUM, DType.FLOAT32));
        assertThrows(IllegalArgumentException.class, () -> GlooMinMax.reduceInto(ReduceOp.SUM, DType.FLOAT32,
                MemorySegment.ofArray(new float[1]), MemorySegment.ofArray(new float[1])));
    }

    private static long bits(double v) {
        return Double.doubleToRawLongBits(v);
    }

    private static long[] bitsOf(double[] v) {
        long[] out = new long[v.length];
        for (int i = 0; i < v.length; i++) {
            out[i] = bits(v[i]);
        }
        return out;
    }
}
