package io.tensorbus.backend.opencl;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.tensorbus.DType;
import io.tensorbus.Device;
import io.tensorbus.tensor.DeviceMemory;
import io.tensorbus.tensor.DeviceOutOfMemoryException;
import io.tensorbus.tensor.Generator;
import io.tensorbus.tensor.MemoryStats;
import io.tensorbus.tensor.Tensor;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BinaryOperator;
import java.util.function.UnaryOperator;
import org.jocl.CL;
import org.jocl.Pointer;
import org.jocl.cl_command_queue;
import org.jocl.cl_context;
import org.jocl.cl_device_id;
import org.jocl.cl_mem;
import org.jocl.cl_platform_id;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Tensors on an OpenCL device compute what the same operations compute on the host. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class OpenClTensorTest {
    private static final Device CL0 = Device.opencl(0);
    private static final List<DType> NUMERIC = List.of(DType.FLOAT32, DType.FLOAT64, DType.FLOAT16, DType.BFLOAT16,
            DType.INT32, DType.INT64);

    @BeforeAll
    static void needsOpenCl() {
        OpenClAvailable.assume("the OpenCL tensor tests");
    }

    /** Random values of {@code dtype}, with zeros, negative zeros and large magnitudes among them. */
    private static Tensor random(DType dtype, long seed, int... shape) {
        Tensor t = Tensor.randn(new Generator(seed), DType.FLOAT64, shape).mul(dtype.isFloatingPoint() ? 100 : 1e6);
        double[] v = t.toDoubleArray();
        for (int i = 0; i < v.length; i += 17) {
            v[i] = i % 34 == 0 ? 0.0 : -0.0;
        }
        return Tensor.of(v, shape).to(dtype);
    }

    private static void assertSameTensor(Tensor expected, Tensor actual, String what) {
        assertEquals(CL0, actual.device(), what + " stays on the device");
        Tensor host = actual.cpu();
        assertEquals(expected.dtype(), host.dtype(), what + ": dtype");
        assertArrayEquals(expected.shape(), host.shape(), what + ": shape");
        double[] e = expected.toDoubleArray();
        double[] a = host.toDoubleArray();
        for (int i = 0; i < e.length; i++) {
            boolean same = Double.isNaN(e[i]) ? Double.isNaN(a[i])
                    : Double.doubleToRawLongBits(e[i]) == Double.doubleToRawLongBits(a[i]);
            if (!same) {
                fail(what + ": element " + i + " is " + a[i] + ", expected " + e[i]);
            }
        }
    }

    @Test
    void movingToTheDeviceAndBackKeepsEveryBitOfEveryDtype() {
        for (DType dtype : DType.values()) {
            Tensor host = random(dtype, 1, 3, 1001);
            Tensor onDevice = host.to(CL0);
            assertEquals(CL0, onDevice.device());
            assertArrayEquals(host.shape(), onDevice.shape());
            Tensor back = onDevice.cpu();
            assertEquals(Device.CPU, back.device());
            assertEquals(-1, host.dataSegment().mismatch(back.dataSegment()), dtype + " round trip");
            assertSame(onDevice, onDevice.to(CL0), "to(its own device) is the tensor itself");
        }
    }

    @Test
    void elementwiseArithmeticMatchesTheHostBitForBit() {
        List<BinaryOperator<Tensor>> ops = List.of(Tensor::add, Tensor::sub, Tensor::mul, Tensor::div,
                (a, b) -> a.add(b, 2.5));
        List<String> names = List.of("add", "sub", "mul", "div", "add alpha");
        for (DType dtype : NUMERIC) {
            Tensor a = random(dtype, 2, 4099);
            Tensor b = random(dtype, 3, 4099);
            for (int k = 0; k < ops.size(); k++) {
                if (!dtype.isFloatingPoint() && k == 4) {
                    continue; // a fractional alpha is refused for integers, on both
                }
                Tensor expected = ops.get(k).apply(a, b);
                assertSameTensor(expected, ops.get(k).apply(a.to(CL0), b.to(CL0)), names.get(k) + " of " + dtype);
            }
            Tensor one = random(dtype, 4, 1);
            assertSameTensor(a.mul(one), a.to(CL0).mul(one.to(CL0)), "mul by a one-element tensor of " + dtype);
        }
    }

    @Test
    void scalarArithmeticMatchesTheHostIncludingPromotion() {
        List<UnaryOperator<Tensor>> ops = List.of(t -> t.add(0.1), t -> t.sub(3), t -> t.mul(-1.5), t -> t.div(7),
                Tensor::neg, t -> t.add(2));
        for (DType dtype : NUMERIC) {
            Tensor a = random(dtype, 5, 2, 777);
            for (int k = 0; k < ops.size(); k++) {
                assertSameTensor(ops.get(k).apply(a), ops.get(k).apply(a.to(CL0)), "scalar op " + k + " of " + dtype);
            }
        }
    }

    @Test
    void inPlaceArithmeticWritesIntoTheDeviceTensor() {
        for (DType dtype : List.of(DType.FLOAT32, DType.FLOAT16, DType.INT64)) {
            Tensor a = random(dtype, 6, 1000);
            Tensor b = random(dtype, 7, 1000);
            Tensor d = a.to(CL0);
            Tensor expected = a.clone().addi(b).muli(3).subi(b);
            Tensor same = d.addi(b.to(CL0)).muli(3).subi(b.to(CL0));
            assertSame(d, same, "in-place ops return the tensor itself");
            assertSameTensor(expected, d, "addi, muli, subi of " + dtype);
        }
        Tensor f = random(DType.FLOAT32, 8, 100);
        assertSameTensor(f.clone().divi(3).addi(0.25), f.to(CL0).divi(3).addi(0.25), "divi, addi of float32");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Tensor.ones(CL0, DType.INT32, 4).divi(2));
        assertTrue(e.getMessage().contains("int32"), e.getMessage());
    }

    @Test
    void castsBetweenEveryPairOfDtypesMatchTheHost() {
        for (DType from : DType.values()) {
            Tensor a = random(from, 9, 513);
            Tensor d = a.to(CL0);
            for (DType to : DType.values()) {
                assertSameTensor(a.to(to), d.to(to), "cast " + from + " -> " + to);
            }
        }
        Tensor special = Tensor.of(new double[] {Double.NaN, 1e30, -1e30, 2.5, -2.5, 3e9}, 6);
        for (DType to : List.of(DType.INT32, DType.INT64, DType.BOOL, DType.FLOAT16, DType.BFLOAT16)) {
            assertSameTensor(special.to(to), special.to(CL0).to(to), "cast of NaN and out-of-range values to " + to);
        }
    }

    @Test
    void fillsFactoriesCopiesAndClonesMatchTheHost() {
        for (DType dtype : DType.values()) {
            assertSameTensor(Tensor.full(-2.75, dtype, 3, 5), Tensor.full(-2.75, dtype, CL0, 3, 5), "full " + dtype);
            assertSameTensor(Tensor.ones(dtype, 7), Tensor.ones(CL0, dtype, 7), "ones " + dtype);
            assertSameTensor(Tensor.zeros(dtype, 7), Tensor.zeros(CL0, dtype, 7), "zeros " + dtype);
        }
        Tensor a = random(DType.FLOAT32, 10, 64);
        Tensor d = Tensor.zeros(CL0, DType.FLOAT32, 64);
        d.copyi(a);
        assertSameTensor(a, d, "copyi from the host");
        Tensor c = d.clone();
        d.filli(1);
        assertSameTensor(a, c, "a clone keeps its own memory");
        Tensor ints = Tensor.zeros(CL0, DType.INT32, 64).copyi(a.to(CL0));
        assertSameTensor(a.to(DType.INT32), ints, "copyi converts the dtype");
        assertSameTensor(a.reshape(8, 8), d.copyi(a.to(CL0)).reshape(8, 8).cpu().to(CL0),
                "a reshape of a device tensor");
    }

    @Test
    void partsOfADeviceTensorComputeAndWriteInPlace() {
        Tensor a = random(DType.FLOAT32, 31, 6, 50);
        Tensor d = a.to(CL0);
        assertSameTensor(a.narrow(0, 2, 3).mul(3), d.narrow(0, 2, 3).mul(3), "a narrow on the first dimension");
        assertSameTensor(a.select(0, 4).add(a.select(0, 1)), d.select(0, 4).add(d.select(0, 1)), "two selects");
        assertEquals(a.split(2, 0).get(2).sum().item(), d.split(2, 0).get(2).sum().item(), 1e-3, "a split's sum");
        Tensor expected = a.clone();
        expected.narrow(0, 1, 2).muli(-1);
        d.narrow(0, 1, 2).muli(-1);
        assertSameTensor(expected, d, "an in-place op on a narrow writes into its base");
        assertSameTensor(expected.narrow(1, 3, 10).mul(2), d.narrow(1, 3, 10).mul(2), "a strided narrow");
        assertSameTensor(expected.t().contiguous(), d.t().contiguous(), "a transpose made contiguous");
        expected.narrow(1, 5, 7).addi(expected.narrow(1, 0, 7).clone());
        d.narrow(1, 5, 7).addi(d.narrow(1, 0, 7).clone());
        expected.t().narrow(0, 1, 2).filli(7);
        d.t().narrow(0, 1, 2).filli(7);
        expected.narrow(1, 20, 3).muli(0.5);
        d.narrow(1, 20, 3).muli(0.5);
        assertSameTensor(expected, d, "in-place ops on strided views write through to their base");
    }

    @Test
    void sumsAndMeansAgreeWithTheHost() {
        for (DType dtype : NUMERIC) {
            Tensor a = random(dtype, 11, 100_003);
            Tensor expected = a.sum();
            Tensor actual = a.to(CL0).sum();
            assertEquals(expected.dtype(), actual.dtype(), "sum dtype of " + dtype);
            double e = expected.item();
            double tolerance = dtype.isFloatingPoint() ? Math.abs(e) * 1e-2 + 1 : 0;
            if (dtype == DType.FLOAT64 || dtype == DType.FLOAT32) {
                tolerance = 1e-6 * a.abs().sum().item();
            }
            assertEquals(e, actual.item(), tolerance, "sum of " + dtype);
        }
        Tensor f = random(DType.FLOAT64, 12, 1000);
        assertEquals(f.mean().item(), f.to(CL0).mean().item(), 1e-12, "mean of float64");
        assertEquals(0.0, Tensor.zeros(CL0, DType.FLOAT32, 0).sum().item(), "the sum of nothing");
        assertEquals(6, Tensor.ones(CL0, DType.BOOL, 6).sum().longItem(), "a sum of bools counts");
    }

    @Test
    void otherOperationsFailNamingTheOperationAndTheDevice() {
        Tensor d = Tensor.ones(CL0, DType.FLOAT32, 4, 4);
        UnsupportedOperationException host = assertThrows(UnsupportedOperationException.class, d::dataSegment);
        assertTrue(host.getMessage().contains("opencl:0") && host.getMessage().contains("cpu()"), host.getMessage());
        IllegalArgumentException index = assertThrows(IllegalArgumentException.class,
                () -> d.indexSelect(0, Tensor.of(new long[] {1}, 1)));
        assertTrue(index.getMessage().startsWith("indexSelect: expected the tensor and its index on one device, got "
                + "opencl:0 and cpu"), index.getMessage());
        UnsupportedOperationException ints = assertThrows(UnsupportedOperationException.class,
                () -> Tensor.ones(CL0, DType.INT64, 3).abs());
        assertTrue(ints.getMessage().startsWith("abs on opencl:0") && ints.getMessage().contains("int64"),
                ints.getMessage());
        IllegalArgumentException mixed = assertThrows(IllegalArgumentException.class,
                () -> d.add(Tensor.ones(4, 4)));
        assertTrue(mixed.getMessage().contains("cpu") && mixed.getMessage().contains("opencl:0")
                && mixed.getMessage().startsWith("add"), mixed.getMessage());
        IllegalArgumentException shapes = assertThrows(IllegalArgumentException.class,
                () -> d.add(Tensor.ones(CL0, DType.FLOAT32, 3)));
        assertTrue(shapes.getMessage().contains("[4, 4]") && shapes.getMessage().contains("[3]"),
                shapes.getMessage());
        assertTrue(d.toString().contains("opencl:0"), d.toString());
    }

    @Test
    void theCachingAllocatorReusesFreedBlocksZeroedAndSaysWhyItIsOutOfMemory() throws Exception {
        DeviceMemory.emptyCache();
        MemoryStats before = DeviceMemory.stats(CL0);
        Tensor a = Tensor.zeros(CL0, DType.FLOAT32, 1000).add(7.0);
        assertTrue(DeviceMemory.stats(CL0).allocatedBytes() >= before.allocatedBytes() + 2 * 4096,
                "two blocks of the 4096-byte class: " + DeviceMemory.stats(CL0));
        a = null;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (DeviceMemory.stats(CL0).cachedBytes() == 0 && System.nanoTime() < deadline) {
            System.gc();
            Thread.sleep(20);
        }
        MemoryStats freed = DeviceMemory.stats(CL0);
        assertTrue(freed.cachedBytes() >= 4096, "a dropped tensor's block is cached: " + freed);
        Tensor b = Tensor.empty(CL0, DType.FLOAT32, 1000);
        assertTrue(DeviceMemory.stats(CL0).cacheHits() > freed.cacheHits(), "served from the cache");
        assertEquals(0.0, b.abs().sum().item(), "a reused block is zeroed");
        DeviceMemory.emptyCache();
        assertEquals(0, DeviceMemory.stats(CL0).cachedBytes());
        try {
            DeviceMemory.setPerProcessMemoryFraction(1e-6, CL0);
            DeviceOutOfMemoryException oom = assertThrows(DeviceOutOfMemoryException.class,
                    () -> Tensor.zeros(CL0, DType.FLOAT32, 1 << 22));
            assertTrue(oom.getMessage().contains("opencl:0 is out of memory: tried to allocate 16.00 MiB")
                    && oom.getMessage().contains("allocated") && oom.getMessage().contains("cached"),
                    oom.getMessage());
            assertEquals(CL0, oom.device());
        } finally {
            DeviceMemory.setPerProcessMemoryFraction(1, CL0);
        }
        assertEquals(b, b, "b stays reachable until here");
    }

    @Test
    void movingALeafToTheDeviceIsRecordedAndItsGradientComesBack() {
        Tensor leaf = Tensor.ones(4).requiresGrad(true);
        Tensor onDevice = leaf.to(CL0);
        assertEquals(CL0, onDevice.device());
        onDevice.mul(3.0).sum().backward();
        assertEquals(Device.CPU, leaf.grad().device());
        assertArrayEquals(new double[] {3, 3, 3, 3}, leaf.grad().toDoubleArray());
    }

    @Test
    void aClMemFromPlainJoclCodeIsUsedInPlace() {
        // The user's own OpenCL code: its own context and queue, a buffer it fills itself.
        CL.setExceptionsEnabled(true);
        cl_platform_id[] platforms = new cl_platform_id[1];
        CL.clGetPlatformIDs(1, platforms, null);
        cl_device_id[] devices = new cl_device_id[1];
        CL.clGetDeviceIDs(platforms[0], CL.CL_DEVICE_TYPE_ALL, 1, devices, null);
        cl_context context = CL.clCreateContext(null, 1, devices, null, null, null);
        cl_command_queue queue = CL.clCreateCommandQueueWithProperties(context, devices[0], null, null);
        int n = 1000;
        ByteBuffer data = ByteBuffer.allocateDirect(4 * n).order(ByteOrder.nativeOrder());
        for (int i = 0; i < n; i++) {
            data.putFloat(4 * i, i);
        }
        cl_mem mem = CL.clCreateBuffer(context, CL.CL_MEM_READ_WRITE | CL.CL_MEM_COPY_HOST_PTR, 4L * n,
                Pointer.to(data), null);
        try {
            Tensor t = Tensor.fromDeviceMemory(CL0, mem, DType.FLOAT32, 10, 100);
            t.muli(2).addi(1);
            ByteBuffer out = ByteBuffer.allocateDirect(4 * n).order(ByteOrder.nativeOrder());
            CL.clEnqueueReadBuffer(queue, mem, true, 0, 4L * n, Pointer.to(out), 0, null, null);
            for (int i = 0; i < n; i++) {
                assertEquals(2f * i + 1, out.getFloat(4 * i), "element " + i + " of the user's cl_mem");
            }
            assertEquals(2f * 999 + 1, t.sum().item() - sumBelow(999), 1e-3);
            IllegalArgumentException small = assertThrows(IllegalArgumentException.class,
                    () -> Tensor.fromDeviceMemory(CL0, mem, DType.FLOAT64, 1000));
            assertTrue(small.getMessage().contains("4000 bytes"), small.getMessage());
            IllegalArgumentException notMem = assertThrows(IllegalArgumentException.class,
                    () -> Tensor.fromDeviceMemory(CL0, "not memory", DType.FLOAT32, 1));
            assertTrue(notMem.getMessage().contains("cl_mem"), notMem.getMessage());
        } finally {
            CL.clReleaseMemObject(mem);
            CL.clReleaseCommandQueue(queue);
            CL.clReleaseContext(context);
        }
    }

    /** The sum of 2i+1 for i below {@code k}. */
    private static double sumBelow(int k) {
        return (double) k * k;
    }
}
