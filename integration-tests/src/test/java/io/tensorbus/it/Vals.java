package io.tensorbus.it;

import io.tensorbus.DType;
import io.tensorbus.tensor.Tensor;
import io.vertx.core.Future;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.IntToDoubleFunction;
import java.util.function.IntToLongFunction;

/** Tensors filled from functions of the element index, element reads, and waits with deadlines. */
final class Vals {
    private Vals() {
    }

    /** A 1-d tensor of a floating-point dtype with {@code n} elements {@code f(i)}. */
    static Tensor real(DType dtype, int n, IntToDoubleFunction f) {
        Tensor t = Tensor.empty(dtype, n);
        MemorySegment s = t.dataSegment();
        for (int i = 0; i < n; i++) {
            switch (dtype) {
                case FLOAT32 -> s.setAtIndex(ValueLayout.JAVA_FLOAT_UNALIGNED, i, (float) f.applyAsDouble(i));
                case FLOAT64 -> s.setAtIndex(ValueLayout.JAVA_DOUBLE_UNALIGNED, i, f.applyAsDouble(i));
                default -> throw new IllegalArgumentException("real() takes float32 or float64, not " + dtype);
            }
        }
        return t;
    }

    /** A 1-d tensor of an integer or bool dtype with {@code n} elements {@code f(i)} (narrowed to the dtype). */
    static Tensor integral(DType dtype, int n, IntToLongFunction f) {
        Tensor t = Tensor.empty(dtype, n);
        MemorySegment s = t.dataSegment();
        for (int i = 0; i < n; i++) {
            long v = f.applyAsLong(i);
            switch (dtype) {
                case INT64 -> s.setAtIndex(ValueLayout.JAVA_LONG_UNALIGNED, i, v);
                case INT32 -> s.setAtIndex(ValueLayout.JAVA_INT_UNALIGNED, i, (int) v);
                case BOOL -> s.set(ValueLayout.JAVA_BYTE, i, (byte) (v != 0 ? 1 : 0));
                default -> throw new IllegalArgumentException("integral() takes int64, int32 or bool, not " + dtype);
            }
        }
        return t;
    }

    /** Element {@code i} of a float32 or float64 tensor. */
    static double real(Tensor t, int i) {
        MemorySegment s = t.dataSegment();
        return switch (t.dtype()) {
            case FLOAT32 -> s.getAtIndex(ValueLayout.JAVA_FLOAT_UNALIGNED, i);
            case FLOAT64 -> s.getAtIndex(ValueLayout.JAVA_DOUBLE_UNALIGNED, i);
            default -> throw new IllegalArgumentException(t.dtype().toString());
        };
    }

    /** Element {@code i} of an int64, int32 or bool tensor. */
    static long integral(Tensor t, int i) {
        MemorySegment s = t.dataSegment();
        return switch (t.dtype()) {
            case INT64 -> s.getAtIndex(ValueLayout.JAVA_LONG_UNALIGNED, i);
            case INT32 -> s.getAtIndex(ValueLayout.JAVA_INT_UNALIGNED, i);
            case BOOL -> s.get(ValueLayout.JAVA_BYTE, i);
            default -> throw new IllegalArgumentException(t.dtype().toString());
        };
    }

    /** Waits for {@code f} up to {@code limit}; rethrows its failure as it is (unchecked) or wrapped. */
    static <T> T await(Future<T> f, Duration limit, String what) {
        try {
            return f.toCompletionStage().toCompletableFuture().get(limit.toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            Throwable c = e.getCause();
            if (c instanceof RuntimeException r) {
                throw r;
            }
            if (c instanceof Error err) {
                throw err;
            }
            throw new IllegalStateException(what + " failed: " + c, c);
        } catch (TimeoutException e) {
            throw new IllegalStateException(what + " did not complete within " + limit, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for " + what, e);
        }
    }

    /** A positive integer from the environment variable {@code name}, or {@code dflt}. */
    static int envInt(String name, int dflt) {
        String v = System.getenv(name);
        return v == null || v.isBlank() ? dflt : Integer.parseInt(v.trim());
    }
}
