package io.tensorbus.backend.nccl;

import io.tensorbus.DType;
import io.tensorbus.Device;
import io.tensorbus.c10d.ReduceOp;
import io.tensorbus.spi.support.DeviceArguments;
import io.tensorbus.spi.DeviceBuffer;
import io.tensorbus.spi.DeviceInfo;
import io.tensorbus.spi.GemmOperand;
import io.tensorbus.spi.KernelSource;
import io.tensorbus.spi.support.DeviceKernels;
import io.tensorbus.spi.support.KernelDeviceRuntime;
import io.tensorbus.spi.support.ElementBytes;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import jcuda.Pointer;
import jcuda.driver.CUdevice;
import jcuda.driver.CUdevice_attribute;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUpointer_attribute;

import static jcuda.driver.JCudaDriver.cuDeviceGet;
import static jcuda.driver.JCudaDriver.cuDeviceGetAttribute;
import static jcuda.driver.JCudaDriver.cuDeviceGetCount;
import static jcuda.driver.JCudaDriver.cuDeviceGetName;
import static jcuda.driver.JCudaDriver.cuDeviceTotalMem;
import static jcuda.driver.JCudaDriver.cuDriverGetVersion;
import static jcuda.driver.JCudaDriver.cuInit;
import static jcuda.driver.JCudaDriver.cuMemcpyDtoDAsync;
import static jcuda.driver.JCudaDriver.cuMemcpyDtoHAsync;
import static jcuda.driver.JCudaDriver.cuMemcpyHtoDAsync;
import static jcuda.driver.JCudaDriver.cuMemcpyPeerAsync;
import static jcuda.driver.JCudaDriver.cuMemsetD16Async;
import static jcuda.driver.JCudaDriver.cuMemsetD32Async;
import static jcuda.driver.JCudaDriver.cuMemsetD8Async;
import static jcuda.driver.JCudaDriver.cuPointerGetAttribute;

/**
 * The CUDA device runtime, through JCuda's driver API: every device as {@code cuda:N} (the driver's ordinal), its
 * memory allocated stream-ordered in the device's primary context, host copies through pinned staging, and the
 * element-wise kernels of {@link DeviceKernels} compiled by NVRTC. A device pointer the user's own JCuda, CUDA or
 * TornadoVM code allocated is {@linkplain #wrap wrapped} without a copy.
 */
public final class CudaRuntime extends KernelDeviceRuntime<CudaBuffer> {
    private final List<DeviceInfo> infos = new ArrayList<>();
    private final CudaDevice[] devices;
    private final ExecutorService completions = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "tensorbus-cuda-events");
        t.setDaemon(true);
        return t;
    });
    private volatile CudaCompiler compiler;

    /**
     * Initialises the driver and lists the devices.
     *
     * @throws IllegalStateException when the driver does not initialise
     */
    CudaRuntime() {
        super(CudaBuffer.class, "CUDA");
        CudaDevice.check(cuInit(0), "cuInit");
        int[] count = new int[1];
        CudaDevice.check(cuDeviceGetCount(count), "cuDeviceGetCount");
        int[] version = new int[1];
        cuDriverGetVersion(version);
        String driver = "CUDA driver " + version[0] / 1000 + "." + version[0] % 1000 / 10;
        for (int i = 0; i < count[0]; i++) {
            infos.add(describe(i, driver));
        }
        devices = new CudaDevice[count[0]];
    }

    @Override
    public String type() {
        return CudaRuntimeProvider.TYPE;
    }

    @Override
    public List<DeviceInfo> devices() {
        return List.copyOf(infos);
    }

    /**
     * The device {@code device} names, opened on first use: its primary context retained and its stream created.
     *
     * @throws IllegalArgumentException when it is not one of {@link #devices()}
     */
    CudaDevice device(Device device) {
        if (!device.type().equals(CudaRuntimeProvider.TYPE) || device.index() < 0 || device.index() >= devices.length) {
            throw new IllegalArgumentException("device " + device + " is not one of the CUDA devices here: "
                    + infos.stream().map(i -> i.device().toString()).toList());
        }
        synchronized (this) {
            int i = device.index();
            if (devices[i] == null) {
                devices[i] = new CudaDevice(device, completions, compiler());
            }
            return devices[i];
        }
    }

    private CudaCompiler compiler() {
        if (compiler == null) {
            compiler = new CudaCompiler();
        }
        return compiler;
    }

    @Override
    public DeviceBuffer allocate(Device device, DType dtype, long... shape) {
        CudaDevice d = device(device);
        return new CudaBuffer(d, d.allocate(DeviceArguments.numel(shape) * dtype.byteSize()), dtype, shape, true);
    }

    @Override
    public DeviceBuffer allocateNear(DeviceBuffer near, DType dtype, long... shape) {
        return allocate(own(near).device(), dtype, shape);
    }

    @Override
    public DeviceBuffer view(DeviceBuffer buffer, long offset, DType dtype, long... shape) {
        CudaBuffer b = own(buffer);
        DeviceArguments.checkView(buffer, offset, dtype, shape);
        if ((b.address() + offset) % dtype.byteSize() != 0) {
            throw new IllegalArgumentException("a view of " + dtype + Arrays.toString(shape) + " at byte " + offset
                    + " of " + buffer + " would not start on a whole " + dtype + " element");
        }
        return new CudaBuffer(b.cuda(), b.address() + offset, dtype, shape, false);
    }

    /**
     * {@inheritDoc}
     *
     * <p>For CUDA, {@code memory} is a JCuda {@code CUdeviceptr} or a device address as a {@link Long}; the driver
     * is asked which device and allocation it belongs to, and the allocation must hold the shape from there.
     */
    @Override
    public DeviceBuffer wrap(Device device, Object memory, DType dtype, long... shape) {
        CUdeviceptr ptr = switch (memory) {
            case CUdeviceptr p -> p;
            case Long address -> CudaDevice.at(address);
            case null, default -> throw new IllegalArgumentException("CUDA memory is a JCuda CUdeviceptr or a device "
                    + "address as a Long, not " + (memory == null ? "null" : memory.getClass().getName()));
        };
        CudaDevice d = device(device);
        d.makeCurrent();
        long address = pointerAttribute(ptr, CUpointer_attribute.CU_POINTER_ATTRIBUTE_DEVICE_POINTER,
                "not CUDA memory");
        long ordinal = pointerAttribute(ptr, CUpointer_attribute.CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, "not CUDA memory")
                & 0xffffffffL;
        if (ordinal != device.index()) {
            throw new IllegalArgumentException("the device pointer lives on cuda:" + ordinal + ", not on " + device);
        }
        long start = pointerAttribute(ptr, CUpointer_attribute.CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, "no range");
        long size = pointerAttribute(ptr, CUpointer_attribute.CU_POINTER_ATTRIBUTE_RANGE_SIZE, "no range");
        long bytes = DeviceArguments.numel(shape) * dtype.byteSize();
        if (start + size - address < bytes || address % dtype.byteSize() != 0) {
            throw new IllegalArgumentException("the allocation at 0x" + Long.toHexString(address) + " holds "
                    + (start + size - address) + " bytes from there, aligned to " + Long.numberOfTrailingZeros(address)
                    + " bits; " + dtype + Arrays.toString(shape) + " needs " + bytes + " bytes on whole elements");
        }
        return new CudaBuffer(d, address, dtype, shape, false);
    }

    private static long pointerAttribute(CUdeviceptr ptr, int attribute, String meaning) {
        long[] v = new long[1];
        int r = cuPointerGetAttribute(Pointer.to(v), attribute, ptr);
        if (r != 0) {
            throw new IllegalArgumentException("the device pointer is " + meaning + " to the CUDA driver: "
                    + jcuda.driver.CUresult.stringFor(r));
        }
        return v[0];
    }

    @Override
    protected CompletableFuture<Void> upload(MemorySegment from, CudaBuffer to, long toOffset) {
        return upload(to.cuda(), from, to.address() + toOffset);
    }

    @Override
    protected CompletableFuture<Void> download(CudaBuffer from, long fromOffset, MemorySegment to) {
        return download(from.cuda(), from.address() + fromOffset, to);
    }

    @Override
    protected CompletableFuture<Void> copyOnDevices(CudaBuffer s, long srcOffset, CudaBuffer d, long dstOffset,
                                                    long bytes) {
        CudaDevice c = d.cuda();
        c.makeCurrent();
        if (s.cuda() == c) {
            CudaDevice.check(cuMemcpyDtoDAsync(CudaDevice.at(d.address() + dstOffset),
                    CudaDevice.at(s.address() + srcOffset), bytes, c.stream()), "cuMemcpyDtoDAsync");
            return c.afterQueuedWork("copy");
        }
        // Another device: wait for its queued work, then copy peer to peer on the destination's stream.
        return s.cuda().afterQueuedWork("copy").thenCompose(v -> {
            c.makeCurrent();
            CudaDevice.check(cuMemcpyPeerAsync(CudaDevice.at(d.address() + dstOffset), c.context(),
                    CudaDevice.at(s.address() + srcOffset), s.cuda().context(), bytes, c.stream()),
                    "cuMemcpyPeerAsync");
            return c.afterQueuedWork("copy");
        });
    }

    /** Host to device through pinned staging, one chunk after another. */
    private CompletableFuture<Void> upload(CudaDevice c, MemorySegment from, long to) {
        return staged(c, from.byteSize(), (pinned, off, n) -> {
            MemorySegment.copy(from, off, pinned.segment(), 0, n);
            c.makeCurrent();
            CudaDevice.check(cuMemcpyHtoDAsync(CudaDevice.at(to + off), pinned.pointer(), n, c.stream()),
                    "cuMemcpyHtoDAsync");
            return c.afterQueuedWork("copy to the device");
        });
    }

    /** Device to host through pinned staging, one chunk after another. */
    private CompletableFuture<Void> download(CudaDevice c, long from, MemorySegment to) {
        return staged(c, to.byteSize(), (pinned, off, n) -> {
            c.makeCurrent();
            CudaDevice.check(cuMemcpyDtoHAsync(pinned.pointer(), CudaDevice.at(from + off), n, c.stream()),
                    "cuMemcpyDtoHAsync");
            return c.afterQueuedWork("copy to the host")
                    .thenRun(() -> MemorySegment.copy(pinned.segment(), 0, to, off, n));
        });
    }

    /** One piece of a staged copy: {@code bytes} bytes at offset {@code off} through {@code pinned}. */
    @FunctionalInterface
    private interface StagedChunk {
        CompletableFuture<Void> copy(PinnedStaging.Buffer pinned, long off, long bytes);
    }

    /**
     * Runs {@code chunk} over {@code total} bytes in pieces the size of one pinned staging buffer, each after the
     * previous one finished, and gives the buffer back at the end.
     */
    private static CompletableFuture<Void> staged(CudaDevice c, long total, StagedChunk chunk) {
        PinnedStaging.Buffer pinned = c.staging().take(total);
        CompletableFuture<Void> chain = CompletableFuture.completedFuture(null);
        long size = pinned.segment().byteSize();
        for (long at = 0; at < total; at += size) {
            long off = at;
            long n = Math.min(size, total - at);
            chain = chain.thenCompose(v -> chunk.copy(pinned, off, n));
        }
        return chain.whenComplete((v, t) -> c.staging().give(pinned));
    }

    @Override
    protected CompletableFuture<Void> reduceFrom(ReduceOp op, CudaBuffer a, long accOffset, DeviceBuffer src,
                                                 long srcOffset, long bytes) {
        // Host memory or another device's: bring the operand next to the accumulator first.
        CudaBuffer staged = (CudaBuffer) allocateNear(a, a.dtype(), bytes / a.dtype().byteSize());
        return copy(src, srcOffset, staged, 0, bytes)
                .thenCompose(v -> reduceNear(op, a, accOffset, staged, bytes))
                .whenComplete((v, t) -> staged.release());
    }

    @Override
    public CompletableFuture<Void> fill(DeviceBuffer dst, double value) {
        try {
            CudaBuffer d = own(dst);
            long n = dst.numel();
            if (n == 0) {
                return CompletableFuture.completedFuture(null);
            }
            MemorySegment bits = MemorySegment.ofArray(ElementBytes.encode(dst.dtype(), value));
            CudaDevice c = d.cuda();
            c.makeCurrent();
            switch (dst.dtype().byteSize()) {
                case 1 -> CudaDevice.check(cuMemsetD8Async(CudaDevice.at(d.address()),
                        bits.get(ValueLayout.JAVA_BYTE, 0),
                        n, c.stream()), "cuMemsetD8Async");
                case 2 -> CudaDevice.check(cuMemsetD16Async(CudaDevice.at(d.address()),
                        bits.get(ValueLayout.JAVA_SHORT_UNALIGNED, 0), n, c.stream()), "cuMemsetD16Async");
                case 4 -> CudaDevice.check(cuMemsetD32Async(CudaDevice.at(d.address()),
                        bits.get(ValueLayout.JAVA_INT_UNALIGNED, 0), n, c.stream()), "cuMemsetD32Async");
                default -> {
                    return c.launch(DeviceKernels.fill8Name(), n, d.address(), 0L, n,
                            bits.get(ValueLayout.JAVA_LONG_UNALIGNED, 0));
                }
            }
            return c.afterQueuedWork("fill");
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    @Override
    protected Object[] operand(CudaBuffer b, long byteOffset) {
        return new Object[] {b.address() + byteOffset, 0L};
    }

    @Override
    protected CompletableFuture<Void> launch(CudaBuffer on, String kernel, long n, Object... args) {
        return on.cuda().launch(kernel, n, args);
    }

    @Override
    protected CompletableFuture<Void> launchProgram(CudaBuffer on, KernelSource program, String kernel, long items,
                                                    int groupSize, Object[] args) {
        return on.cuda().launch(program, kernel, items, groupSize, args);
    }

    /** GEMMs run in cuBLAS where it loads, else in the dialect's own kernel. */
    @Override
    protected CompletableFuture<Void> gemmOn(int batch, int m, int n, int k, double alpha, GemmOperand a,
                                             GemmOperand b, double beta, GemmOperand c) {
        CublasGemm blas = own(c.buffer()).cuda().blas();
        return blas == null ? super.gemmOn(batch, m, n, k, alpha, a, b, beta, c)
                : blas.run(batch, m, n, k, alpha, a, b, beta, c);
    }

    @Override
    protected CompletableFuture<Void> launchOneGroup(CudaBuffer on, String kernel, int threads, Object... args) {
        return on.cuda().launchOneBlock(kernel, threads, args);
    }

    @Override
    protected void checkTogether(CudaBuffer first, CudaBuffer second) {
        if (first.cuda() != second.cuda()) {
            throw new IllegalArgumentException(first + " and " + second + " are on different devices; copy one to the "
                    + "other's device first");
        }
    }

    @Override
    public void release(DeviceBuffer buffer) {
        own(buffer).release();
    }

    private static DeviceInfo describe(int ordinal, String driver) {
        CUdevice cu = new CUdevice();
        CudaDevice.check(cuDeviceGet(cu, ordinal), "cuDeviceGet");
        byte[] name = new byte[256];
        cuDeviceGetName(name, name.length, cu);
        long[] memory = new long[1];
        cuDeviceTotalMem(memory, cu);
        int end = 0;
        while (end < name.length && name[end] != 0) {
            end++;
        }
        int[] major = new int[1];
        int[] minor = new int[1];
        cuDeviceGetAttribute(major, CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, cu);
        cuDeviceGetAttribute(minor, CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, cu);
        return new DeviceInfo(new Device(CudaRuntimeProvider.TYPE, ordinal),
                new String(name, 0, end, StandardCharsets.UTF_8), driver, memory[0],
                "compute capability " + major[0] + "." + minor[0]);
    }
}
