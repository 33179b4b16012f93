package io.tensorbus.spi.contract;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.tensorbus.DType;
import io.tensorbus.Device;
import io.tensorbus.c10d.ReduceOp;
import io.tensorbus.spi.DeviceBuffer;
import io.tensorbus.spi.DeviceRuntime;
import io.tensorbus.spi.DeviceRuntimeProvider;
import io.tensorbus.spi.ElementwiseOp;
import io.tensorbus.spi.GemmOperand;
import io.tensorbus.spi.KernelSource;
import io.tensorbus.spi.support.HostReductions;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * What every {@link DeviceRuntime} keeps, run by each runtime's test on its first device: copies in every
 * direction, views, reduction and division kernels that agree bit for bit with {@link HostReductions}, and
 * refusals that name what was wrong. A subclass names the device and skips the suite, saying why, where the
 * runtime is not available.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
public abstract class DeviceRuntimeContractTest extends DeviceSuite {
    private DeviceRuntime runtime;

    @BeforeAll
    void openRuntime() {
        runtime = DeviceRuntimeProvider.of(dev());
    }

    /** Random bytes of valid elements, with the float specials (NaN, infinities, both zeros) sprinkled in. */
    private static MemorySegment randomElements(DType dtype, long n, long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        MemorySegment s = Arena.ofAuto().allocate(Math.max(1, n * dtype.byteSize()), 64).asSlice(0,
                n * dtype.byteSize());
        float[] specials = {Float.NaN, Float.POSITIVE_INFINITY, Float.NEGATIVE_INFINITY, 0.0f, -0.0f, 1.0f, -1.0f};
        for (long i = 0; i < n; i++) {
            float f = random.nextInt(8) == 0 ? specials[random.nextInt(specials.length)]
                    : (float) (random.nextGaussian() * Math.pow(10, random.nextInt(-3, 4)));
            switch (dtype) {
                case FLOAT32 -> s.setAtIndex(ValueLayout.JAVA_FLOAT_UNALIGNED, i, f);
                case FLOAT64 -> s.setAtIndex(ValueLayout.JAVA_DOUBLE_UNALIGNED, i, f == f ? f * Math.PI : f);
                case FLOAT16 -> s.setAtIndex(ValueLayout.JAVA_SHORT_UNALIGNED, i, Float.floatToFloat16(f));
                case BFLOAT16 -> s.setAtIndex(ValueLayout.JAVA_SHORT_UNALIGNED, i,
                        (short) (Float.floatToRawIntBits(f) >>> 16));
                case INT32 -> s.setAtIndex(ValueLayout.JAVA_INT_UNALIGNED, i, random.nextInt());
                case INT64 -> s.setAtIndex(ValueLayout.JAVA_LONG_UNALIGNED, i, random.nextLong());
                case BOOL -> s.set(ValueLayout.JAVA_BYTE, i, (byte) random.nextInt(2));
            }
        }
        return s;
    }

    private DeviceBuffer upload(MemorySegment host, DType dtype) throws Exception {
        long n = host.byteSize() / dtype.byteSize();
        DeviceBuffer d = runtime.allocate(dev(), dtype, n);
        runtime.copy(DeviceBuffer.host(host, dtype, n), 0, d, 0, host.byteSize()).get(30, TimeUnit.SECONDS);
        return d;
    }

    private MemorySegment download(DeviceBuffer d) throws Exception {
        MemorySegment out = Arena.ofAuto().allocate(Math.max(1, d.byteSize()), 64).asSlice(0, d.byteSize());
        runtime.copy(d, 0, DeviceBuffer.host(out, d.dtype(), d.numel()), 0, d.byteSize()).get(30, TimeUnit.SECONDS);
        return out;
    }

    /** Same elements, where any NaN equals any NaN (payloads may differ between the JDK and a device). */
    private static void assertSameElements(MemorySegment expected, MemorySegment actual, DType dtype, String what) {
        long at = expected.mismatch(actual);
        if (at < 0) {
            return;
        }
        int e = dtype.byteSize();
        for (long i = at / e; i < expected.byteSize() / e; i++) {
            double x = value(expected, dtype, i);
            double y = value(actual, dtype, i);
            boolean same = Double.isNaN(x) ? Double.isNaN(y)
                    : Double.doubleToRawLongBits(x) == Double.doubleToRawLongBits(y);
            if (!same) {
                fail(what + ": element " + i + " is " + y + ", expected " + x);
            }
        }
    }

    private static double value(MemorySegment s, DType dtype, long i) {
        return switch (dtype) {
            case FLOAT32 -> s.getAtIndex(ValueLayout.JAVA_FLOAT_UNALIGNED, i);
            case FLOAT64 -> s.getAtIndex(ValueLayout.JAVA_DOUBLE_UNALIGNED, i);
            case FLOAT16 -> Float.float16ToFloat(s.getAtIndex(ValueLayout.JAVA_SHORT_UNALIGNED, i));
            case BFLOAT16 -> Float.intBitsToFloat(s.getAtIndex(ValueLayout.JAVA_SHORT_UNALIGNED, i) << 16);
            case INT32 -> s.getAtIndex(ValueLayout.JAVA_INT_UNALIGNED, i);
            case INT64 -> s.getAtIndex(ValueLayout.JAVA_LONG_UNALIGNED, i);
            case BOOL -> s.get(ValueLayout.JAVA_BYTE, i);
        };
    }

    @Test
    void reductionKernelsMatchTheHostBitForBitForEveryOpAndDtype() throws Exception {
        long n = 10_007;
        for (DType dtype : DType.values()) {
            for (ReduceOp op : ReduceOp.plain()) {
                if (!supports(op, dtype)) {
                    continue;
                }
                MemorySegment a = randomElements(dtype, n, 1 + op.code());
                MemorySegment b = randomElements(dtype, n, 100 + op.code());
                DeviceBuffer acc = upload(a, dtype);
                DeviceBuffer src = upload(b, dtype);
                runtime.reduce(op, acc, 0, src, 0, a.byteSize()).get(30, TimeUnit.SECONDS);
                HostReductions.reduceInto(op, dtype, a, b);
                assertSameElements(a, download(acc), dtype, op + " of " + dtype + " on " + dev());
                runtime.release(acc);
                runtime.release(src);
            }
        }
    }

    @Test
    void aReductionFromHostMemoryAtOffsetsTouchesOnlyItsRange() throws Exception {
        DType dtype = DType.FLOAT32;
        MemorySegment a = randomElements(dtype, 1000, 7);
        MemorySegment b = randomElements(dtype, 1000, 8);
        DeviceBuffer acc = upload(a, dtype);
        // Elements [100, 400) of acc combine with host elements [500, 800).
        runtime.reduce(ReduceOp.SUM, acc, 400, DeviceBuffer.host(b, dtype, 1000), 2000, 1200)
                .get(30, TimeUnit.SECONDS);
        HostReductions.reduceInto(ReduceOp.SUM, dtype, a.asSlice(400, 1200), b.asSlice(2000, 1200));
        assertSameElements(a, download(acc), dtype, "a SUM over elements [100, 400)");
    }

    @Test
    void divideMatchesTheHostsCorrectlyRoundedQuotient() throws Exception {
        for (DType dtype : new DType[] {DType.FLOAT32, DType.FLOAT64, DType.FLOAT16, DType.BFLOAT16}) {
            MemorySegment a = randomElements(dtype, 4099, 3);
            DeviceBuffer acc = upload(a, dtype);
            runtime.divide(acc, 0, a.byteSize(), 3).get(30, TimeUnit.SECONDS);
            HostReductions.divide(dtype, a, 3);
            assertSameElements(a, download(acc), dtype, "dividing " + dtype + " by 3");
        }
    }

    @Test
    void copiesBetweenHostAndDeviceAndWithinTheDeviceKeepEveryByte() throws Exception {
        MemorySegment bytes = randomElements(DType.INT64, 5000, 11);
        DeviceBuffer a = upload(bytes, DType.INT64);
        DeviceBuffer b = runtime.allocate(dev(), DType.INT64, 5000);
        runtime.copy(a, 8 * 1000, b, 8 * 10, 8 * 3000).get(30, TimeUnit.SECONDS);
        MemorySegment expected = Arena.ofAuto().allocate(8 * 5000, 64);
        MemorySegment.copy(bytes, 8 * 1000, expected, 8 * 10, 8 * 3000);
        assertEquals(-1, expected.mismatch(download(b)), "a device-to-device copy at offsets, into a zeroed buffer");
        // Heap memory works too: the runtime stages it through native memory.
        MemorySegment heap = MemorySegment.ofArray(new byte[8 * 5000]);
        runtime.copy(a, 0, DeviceBuffer.host(heap, DType.INT64, 5000), 0, 8 * 5000).get(30, TimeUnit.SECONDS);
        assertEquals(-1, bytes.mismatch(heap), "a copy into heap memory");
    }

    @Test
    void viewsAddressTheirRangeOfTheBufferInEveryOperation() throws Exception {
        MemorySegment a = randomElements(DType.FLOAT32, 1000, 21);
        MemorySegment b = randomElements(DType.FLOAT32, 1000, 22);
        DeviceBuffer da = upload(a, DType.FLOAT32);
        DeviceBuffer db = upload(b, DType.FLOAT32);
        DeviceBuffer va = runtime.view(da, 4 * 100, DType.FLOAT32, 300);
        DeviceBuffer vb = runtime.view(db, 4 * 600, DType.FLOAT32, 300);
        runtime.reduce(ReduceOp.MAX, va, 0, vb, 0, 4 * 300).get(30, TimeUnit.SECONDS);
        HostReductions.reduceInto(ReduceOp.MAX, DType.FLOAT32, a.asSlice(400, 1200), b.asSlice(2400, 1200));
        assertSameElements(a, download(da), DType.FLOAT32, "MAX into elements [100, 400) from [600, 900)");
        assertSameElements(a.asSlice(400, 1200), download(va), DType.FLOAT32, "a view read back on its own");
        runtime.copy(vb, 0, va, 0, 4 * 300).get(30, TimeUnit.SECONDS);
        MemorySegment.copy(b, 2400, a, 400, 1200);
        assertSameElements(a, download(da), DType.FLOAT32, "a copy between views");
        runtime.fill(runtime.view(da, 4 * 990, DType.FLOAT32, 10), 2.5).get(30, TimeUnit.SECONDS);
        for (int i = 990; i < 1000; i++) {
            a.setAtIndex(ValueLayout.JAVA_FLOAT_UNALIGNED, i, 2.5f);
        }
        assertSameElements(a, download(da), DType.FLOAT32, "a fill of the last ten elements");
        DeviceBuffer sum = runtime.allocate(dev(), DType.FLOAT32, 1);
        runtime.elementwise(ElementwiseOp.ADD, runtime.view(da, 0, DType.FLOAT32, 2),
                runtime.view(da, 4 * 2, DType.FLOAT32, 2), runtime.view(da, 4 * 4, DType.FLOAT32, 2))
                .get(30, TimeUnit.SECONDS);
        runtime.sum(runtime.view(da, 4 * 4, DType.FLOAT32, 2), sum).get(30, TimeUnit.SECONDS);
        float[] x = new float[4];
        for (int i = 0; i < 4; i++) {
            x[i] = a.getAtIndex(ValueLayout.JAVA_FLOAT_UNALIGNED, i);
        }
        float expected = (float) ((double) (x[0] + x[2]) + (double) (x[1] + x[3]));
        MemorySegment got = download(sum);
        assertEquals(expected, got.getAtIndex(ValueLayout.JAVA_FLOAT_UNALIGNED, 0), 1e-3f * Math.abs(expected) + 1e-6f,
                "the sum of two elements written by an element-wise op into a view");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> runtime.view(da, 4 * 999, DType.FLOAT32, 2));
        assertTrue(e.getMessage().contains("does not fit"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> runtime.view(da, 2, DType.FLOAT32, 1));
    }

    @Test
    void zeroElementBuffersAllocateCopyAndReduce() throws Exception {
        DeviceBuffer empty = runtime.allocate(dev(), DType.FLOAT32, 0);
        assertEquals(0, empty.byteSize());
        runtime.reduce(ReduceOp.SUM, empty, 0, empty, 0, 0).get(30, TimeUnit.SECONDS);
        runtime.copy(empty, 0, DeviceBuffer.host(MemorySegment.NULL, DType.FLOAT32, 0), 0, 0)
                .get(30, TimeUnit.SECONDS);
        runtime.release(empty);
        runtime.release(empty); // idempotent
    }

    @Test
    void badRangesDtypesAndBuffersFailNamingWhatWasWrong() throws Exception {
        DeviceBuffer a = runtime.allocate(dev(), DType.FLOAT32, 10);
        DeviceBuffer ints = runtime.allocate(dev(), DType.INT32, 10);
        assertMessage(runtime.copy(a, 4, a, 0, 40).handle((v, t) -> t instanceof CompletionException c ? c.getCause()
                : t).join(), "[4, 44)", "40 bytes");
        assertMessage(runtime.copy(a, 2, a, 0, 4).handle((v, t) -> t instanceof CompletionException c ? c.getCause()
                : t).join(), "whole-element");
        assertMessage(runtime.reduce(ReduceOp.SUM, a, 0, ints, 0,
                40).handle((v, t) -> t instanceof CompletionException c ? c.getCause() : t).join(), "int32", "float32");
        assertMessage(runtime.reduce(ReduceOp.BAND, a, 0, a, 0, 40).handle((v, t) -> t instanceof CompletionException c
                ? c.getCause() : t).join(), "BAND", "float32");
        assertMessage(runtime.divide(ints, 0, 40, 2).handle((v, t) -> t instanceof CompletionException c ? c.getCause()
                : t).join(), "int32", "floating-point");
        assertMessage(runtime.divide(a, 0, 40, 0).handle((v, t) -> t instanceof CompletionException c ? c.getCause()
                : t).join(), "divisor=0");
        DeviceBuffer host = DeviceBuffer.host(Arena.ofAuto().allocate(40), DType.FLOAT32, 10);
        assertMessage(runtime.reduce(ReduceOp.SUM, host, 0, a, 0,
                40).handle((v, t) -> t instanceof CompletionException c ? c.getCause() : t).join(), "device memory",
                "cpu");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> runtime.allocate(new Device(dev().type(), 99), DType.FLOAT32, 1));
        assertTrue(e.getMessage().contains(dev().type() + ":99") && e.getMessage().contains(dev().toString()),
                e.getMessage());
        UnsupportedOperationException u = assertThrows(UnsupportedOperationException.class, a::segment);
        assertTrue(u.getMessage().contains("device memory"), u.getMessage());
    }

    private static final KernelSource AXPY = new KernelSource("contract-axpy", """
            KERNEL void axpy(GLOBAL const float* x, ulong xo, GLOBAL float* y, ulong yo, ulong n, float a, int twice) {
                size_t i = GID;
                if (i < n) y[yo + i] = y[yo + i] + a * x[xo + i] * (twice ? 2.0f : 1.0f);
            }

            KERNEL void group_sums(GLOBAL const double* x, ulong xo, GLOBAL double* out, ulong oo) {
                LOCAL_MEM double part[64];
                size_t l = LID;
                part[l] = x[xo + GID];
                SYNC_LOCAL();
                if (l == 0) {
                    double s = 0;
                    for (int i = 0; i < 64; i++) s += part[i];
                    out[oo + GID / 64] = s;
                }
            }
            """);

    @Test
    void launchRunsACallersKernelOnViewsWithScalarsAndWorkGroups() throws Exception {
        int n = 1000;
        MemorySegment xs = Arena.ofAuto().allocate(4L * n, 64);
        MemorySegment ys = Arena.ofAuto().allocate(4L * n, 64);
        for (int i = 0; i < n; i++) {
            xs.setAtIndex(ValueLayout.JAVA_FLOAT, i, i * 0.5f);
            ys.setAtIndex(ValueLayout.JAVA_FLOAT, i, 1 - i);
        }
        DeviceBuffer x = upload(xs, DType.FLOAT32);
        DeviceBuffer y = upload(ys, DType.FLOAT32);
        DeviceBuffer yTail = runtime.view(y, 4L * 10, DType.FLOAT32, n - 10);
        runtime.launch(AXPY, "axpy", n - 10, 0, x, yTail, (long) (n - 10), 3.0f, 1).get(60, TimeUnit.SECONDS);
        MemorySegment got = download(y);
        for (int i = 0; i < n; i++) {
            float want = i < 10 ? 1 - i : (1 - i) + 3.0f * ((i - 10) * 0.5f) * 2.0f;
            assertEquals(want, got.getAtIndex(ValueLayout.JAVA_FLOAT, i), "element " + i);
        }
        MemorySegment ds = Arena.ofAuto().allocate(8L * 256, 64);
        for (int i = 0; i < 256; i++) {
            ds.setAtIndex(ValueLayout.JAVA_DOUBLE, i, i);
        }
        DeviceBuffer out = runtime.allocate(dev(), DType.FLOAT64, 4);
        runtime.launch(AXPY, "group_sums", 256, 64, upload(ds, DType.FLOAT64), out).get(60, TimeUnit.SECONDS);
        MemorySegment sums = download(out);
        for (int g = 0; g < 4; g++) {
            assertEquals(64.0 * 64 * g + 64 * 63 / 2.0, sums.getAtIndex(ValueLayout.JAVA_DOUBLE, g), "group " + g);
        }
        assertMessage(unwrap(runtime.launch(AXPY, "axpy", 100, 64, x, y, 100L, 1.0f, 0)), "multiple of the group");
        assertMessage(unwrap(runtime.launch(AXPY, "axpy", 10, 0, 10L, 1.0f)), "no device buffer");
        assertMessage(unwrap(runtime.launch(AXPY, "axpy", 10, 0, x, "y")), "argument y");
    }

    @Test
    void gemmMultipliesBatchesOfTransposedAndStridedMatricesAsTheHostDoes() throws Exception {
        int batch = 3;
        int m = 5;
        int n = 7;
        int k = 9;
        SplittableRandom random = new SplittableRandom(7);
        double[] a = random.doubles((long) batch * k * m, -1, 1).toArray(); // stored transposed: [batch, k, m]
        double[] b = random.doubles((long) batch * k * n + 3, -1, 1).toArray(); // [batch, k, n] from element 3
        for (DType dtype : new DType[] {DType.FLOAT32, DType.FLOAT64}) {
            DeviceBuffer da = upload(segment(a, dtype), dtype);
            DeviceBuffer db = upload(segment(b, dtype), dtype);
            DeviceBuffer dc = runtime.allocate(dev(), dtype, (long) batch * m * n);
            runtime.gemm(batch, m, n, k, 2.0, new GemmOperand(da, 0, m, (long) k * m, true),
                    new GemmOperand(db, 3, n, (long) k * n, false), 0.0,
                    new GemmOperand(dc, 0, n, (long) m * n, false)).get(120, TimeUnit.SECONDS);
            MemorySegment c = download(dc);
            for (int bi = 0; bi < batch; bi++) {
                for (int i = 0; i < m; i++) {
                    for (int j = 0; j < n; j++) {
                        double want = 0;
                        for (int p = 0; p < k; p++) {
                            want += a[bi * k * m + p * m + i] * b[3 + bi * k * n + p * n + j];
                        }
                        double got = value(c, dtype, (long) bi * m * n + (long) i * n + j);
                        assertEquals(2 * want, got, dtype == DType.FLOAT32 ? 1e-5 : 1e-12, dtype + " C[" + bi + ","
                                + i + "," + j + "]");
                    }
                }
            }
        }
        DeviceBuffer f = runtime.allocate(dev(), DType.FLOAT32, 4);
        DeviceBuffer i = runtime.allocate(dev(), DType.INT32, 4);
        assertMessage(unwrap(runtime.gemm(1, 2, 2, 1, 1, new GemmOperand(i, 0, 1, 0, false),
                new GemmOperand(f, 0, 2, 0, false), 0, new GemmOperand(f, 0, 2, 0, false))), "float32", "int32");
        assertMessage(unwrap(runtime.gemm(1, 2, 2, 2, 1, new GemmOperand(f, 0, 2, 0, false),
                new GemmOperand(f, 0, 2, 0, false), 0, new GemmOperand(f, 1, 2, 0, false))), "reaches element 4");
    }

    private static MemorySegment segment(double[] values, DType dtype) {
        MemorySegment s = Arena.ofAuto().allocate((long) values.length * dtype.byteSize(), 64);
        for (int i = 0; i < values.length; i++) {
            if (dtype == DType.FLOAT32) {
                s.setAtIndex(ValueLayout.JAVA_FLOAT, i, (float) values[i]);
            } else {
                s.setAtIndex(ValueLayout.JAVA_DOUBLE, i, values[i]);
            }
        }
        return s;
    }

    private static Throwable unwrap(CompletableFuture<Void> f) {
        return f.handle((v, t) -> t instanceof CompletionException c ? c.getCause() : t).join();
    }

    @Test
    void theRuntimeListsItsDevicesAndTheProviderIsFoundByServiceLoader() {
        assertTrue(DeviceRuntimeProvider.all().stream()
                .anyMatch(p -> p.type().equals(dev().type()) && p.isAvailable()));
        assertEquals(dev(), runtime.devices().getFirst().device());
        assertTrue(runtime.devices().getFirst().memoryBytes() > 0);
    }

    private static void assertMessage(Throwable t, String... parts) {
        assertInstanceOf(IllegalArgumentException.class, t, "expected a refusal, got " + t);
        for (String p : parts) {
            assertTrue(t.getMessage().contains(p), "expected '" + p + "' in: " + t.getMessage());
        }
    }

    private static boolean supports(ReduceOp op, DType dtype) {
        try {
            op.checkSupports(dtype);
            return true;
        } catch (IllegalArgumentException e) {
            return false;
        }
    }
}
