package io.tensorbus.backend.opencl;

import static org.jocl.CL.CL_CONTEXT_DEVICES;
import static org.jocl.CL.CL_DEVICE_EXTENSIONS;
import static org.jocl.CL.CL_DEVICE_GLOBAL_MEM_SIZE;
import static org.jocl.CL.CL_DEVICE_MAX_MEM_ALLOC_SIZE;
import static org.jocl.CL.CL_DEVICE_NAME;
import static org.jocl.CL.CL_DEVICE_SINGLE_FP_CONFIG;
import static org.jocl.CL.CL_DEVICE_TYPE_ALL;
import static org.jocl.CL.CL_DEVICE_VERSION;
import static org.jocl.CL.CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT;
import static org.jocl.CL.CL_MEM_CONTEXT;
import static org.jocl.CL.CL_MEM_SIZE;
import static org.jocl.CL.CL_PLATFORM_NAME;
import static org.jocl.CL.CL_PROGRAM_BUILD_LOG;

import io.tensorbus.DType;
import io.tensorbus.Device;
import io.tensorbus.c10d.ReduceOp;
import io.tensorbus.spi.support.DeviceArguments;
import io.tensorbus.spi.DeviceBuffer;
import io.tensorbus.spi.DeviceInfo;
import io.tensorbus.spi.GemmOperand;
import io.tensorbus.spi.KernelSource;
import io.tensorbus.spi.support.DeviceKernels;
import io.tensorbus.spi.support.ElementBytes;
import io.tensorbus.spi.support.KernelDeviceRuntime;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.jocl.CL;
import org.jocl.CLException;
import org.jocl.Pointer;
import org.jocl.Sizeof;
import org.jocl.cl_context;
import org.jocl.cl_device_id;
import org.jocl.cl_mem;
import org.jocl.cl_platform_id;
import org.jocl.cl_program;

/**
 * The OpenCL device runtime, through JOCL: every device of every platform, numbered {@code opencl:0},
 * {@code opencl:1}, ... in platform order. Buffers it allocates live in one context per device; a {@code cl_mem}
 * the user's own JOCL (or TornadoVM, or C) code created is {@linkplain #wrap wrapped} without a copy, and its
 * copies and reductions run in the context that owns it.
 */
public final class OpenClRuntime extends KernelDeviceRuntime<OpenClBuffer> {
    private final List<DeviceInfo> infos = new ArrayList<>();
    private final List<cl_device_id> ids = new ArrayList<>();
    private final OpenClContext[] defaults;
    private final Map<cl_context, OpenClContext> foreign = new ConcurrentHashMap<>();
    private final ExecutorService completions = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "tensorbus-opencl-events");
        t.setDaemon(true);
        return t;
    });

    /** Opens the OpenCL library and lists the devices. */
    OpenClRuntime() {
        super(OpenClBuffer.class, "OpenCL");
        CL.setExceptionsEnabled(true);
        for (cl_platform_id platform : platforms()) {
            String platformName = infoString(platform);
            for (cl_device_id id : devices(platform)) {
                ids.add(id);
                infos.add(describe(new Device(OpenClRuntimeProvider.TYPE, infos.size()), id, platformName));
            }
        }
        defaults = new OpenClContext[ids.size()];
    }

    @Override
    public String type() {
        return OpenClRuntimeProvider.TYPE;
    }

    @Override
    public List<DeviceInfo> devices() {
        return List.copyOf(infos);
    }

    @Override
    public DeviceBuffer allocate(Device device, DType dtype, long... shape) {
        OpenClContext c = defaultContext(device);
        long bytes = numel(shape) * dtype.byteSize();
        long max = longInfo(ids.get(device.index()), CL_DEVICE_MAX_MEM_ALLOC_SIZE);
        if (bytes > max) {
            throw new IllegalArgumentException(dtype + Arrays.toString(shape) + " needs " + bytes + " bytes but "
                    + device + " allocates at most " + max + " bytes at once");
        }
        return new OpenClBuffer(c, c.allocate(bytes), dtype, shape, true);
    }

    @Override
    public DeviceBuffer view(DeviceBuffer buffer, long offset, DType dtype, long... shape) {
        OpenClBuffer b = own(buffer);
        DeviceArguments.checkView(buffer, offset, dtype, shape);
        if ((b.offset() + offset) % dtype.byteSize() != 0) {
            throw new IllegalArgumentException("a view of " + dtype + Arrays.toString(shape) + " at byte " + offset
                    + " of " + buffer + " would not start on a whole " + dtype + " element of its memory");
        }
        long bytes = numel(shape) * dtype.byteSize();
        return new OpenClBuffer(b.context(), bytes == 0 ? null : b.mem(), b.offset() + offset, dtype, shape, false);
    }

    @Override
    public DeviceBuffer allocateNear(DeviceBuffer near, DType dtype, long... shape) {
        OpenClContext c = own(near).context();
        return new OpenClBuffer(c, c.allocate(numel(shape) * dtype.byteSize()), dtype, shape, true);
    }

    /**
     * Wraps a {@code cl_mem} that other code allocated, without copying: collectives read and write it in
     * place, in the context that owns it. The caller keeps ownership ({@link #release} only forgets it).
     *
     * @param mem a memory object of at least {@code numel(shape) * dtype.byteSize()} bytes
     * @throws IllegalArgumentException when the memory object is smaller than the shape needs, or its context's
     *         device is not one of this runtime's devices
     */
    public DeviceBuffer wrap(cl_mem mem, DType dtype, long... shape) {
        Objects.requireNonNull(mem, "mem");
        long bytes = numel(shape) * dtype.byteSize();
        long size = memSize(mem);
        if (size < bytes) {
            throw new IllegalArgumentException("cl_mem of " + size + " bytes cannot hold " + dtype
                    + Arrays.toString(shape) + " (" + bytes + " bytes)");
        }
        cl_context owner = new cl_context();
        CL.clGetMemObjectInfo(mem, CL_MEM_CONTEXT, Sizeof.cl_context, Pointer.to(owner), null);
        return new OpenClBuffer(contextOf(owner), mem, dtype, shape, false);
    }

    /**
     * {@inheritDoc}
     *
     * <p>For OpenCL, {@code memory} is a JOCL {@code cl_mem}; the buffer's device is the one its context was
     * made for, which must be {@code device}.
     */
    @Override
    public DeviceBuffer wrap(Device device, Object memory, DType dtype, long... shape) {
        if (!(memory instanceof cl_mem mem)) {
            throw new IllegalArgumentException("OpenCL memory is a JOCL cl_mem, not " + (memory == null ? "null"
                    : memory.getClass().getName()));
        }
        DeviceBuffer b = wrap(mem, dtype, shape);
        if (!b.device().equals(device)) {
            throw new IllegalArgumentException("the cl_mem lives on " + b.device() + ", not on " + device);
        }
        return b;
    }

    @Override
    public CompletableFuture<Void> fill(DeviceBuffer dst, double value) {
        try {
            OpenClBuffer d = own(dst);
            return dst.byteSize() == 0 ? CompletableFuture.completedFuture(null)
                    : d.context().fill(d.mem(), ElementBytes.encode(dst.dtype(), value), d.offset(), dst.byteSize());
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    @Override
    protected Object[] operand(OpenClBuffer b, long byteOffset) {
        return new Object[] {b.mem(), (b.offset() + byteOffset) / b.dtype().byteSize()};
    }

    @Override
    protected CompletableFuture<Void> launch(OpenClBuffer on, String kernel, long n, Object... args) {
        return on.context().run(kernel, n, null, args);
    }

    @Override
    protected CompletableFuture<Void> launchProgram(OpenClBuffer on, KernelSource program, String kernel, long items,
                                                    int groupSize, Object[] args) {
        return on.context().run(program, kernel, items, groupSize, args);
    }

    /** GEMMs run in CLBlast. */
    @Override
    protected CompletableFuture<Void> gemmOn(int batch, int m, int n, int k, double alpha, GemmOperand a,
                                             GemmOperand b, double beta, GemmOperand c) {
        return ClBlast.gemm(batch, m, n, k, alpha, own(a.buffer()), a, own(b.buffer()), b, beta, own(c.buffer()), c);
    }

    @Override
    protected CompletableFuture<Void> launchOneGroup(OpenClBuffer on, String kernel, int threads, Object... args) {
        return on.context().runOneGroup(kernel, threads, null, args);
    }

    @Override
    protected void checkTogether(OpenClBuffer first, OpenClBuffer second) {
        if (second.context() != first.context()) {
            throw new IllegalArgumentException(first + " and " + second + " belong to different OpenCL contexts; copy "
                    + "one into the other's first");
        }
    }

    @Override
    protected CompletableFuture<Void> upload(MemorySegment from, OpenClBuffer to, long toOffset) {
        return to.context().write(nativeCopy(from), to.mem(), to.offset() + toOffset, from.byteSize());
    }

    @Override
    protected CompletableFuture<Void> download(OpenClBuffer from, long fromOffset, MemorySegment to) {
        return read(from, fromOffset, to);
    }

    @Override
    protected CompletableFuture<Void> copyOnDevices(OpenClBuffer s, long srcOffset, OpenClBuffer d, long dstOffset,
                                                    long bytes) {
        if (s.context() == d.context()) {
            return s.context().copy(s.mem(), s.offset() + srcOffset, d.mem(), d.offset() + dstOffset, bytes);
        }
        // Memory of two contexts: no command can see both, so the bytes pass through the host.
        MemorySegment staging = Arena.ofAuto().allocate(bytes, 64);
        return s.context().read(s.mem(), s.offset() + srcOffset, staging, bytes)
                .thenCompose(v -> d.context().write(staging, d.mem(), d.offset() + dstOffset, bytes));
    }

    @Override
    protected CompletableFuture<Void> reduceFrom(ReduceOp op, OpenClBuffer a, long accOffset, DeviceBuffer src,
                                                 long srcOffset, long bytes) {
        OpenClContext c = a.context();
        DType dtype = a.dtype();
        long n = bytes / dtype.byteSize();
        if (src.isHost() && src.segment().isNative()) {
            // The kernel reads host memory in place: no copy on a CPU device (pocl), one by the driver on a GPU.
            MemorySegment bytesIn = src.segment().asSlice(srcOffset, bytes);
            cl_mem view = c.hostView(bytesIn);
            Object[] at = operand(a, accOffset);
            return c.run(DeviceKernels.reduceName(dtype), n, bytesIn, at[0], at[1], view, 0L, n, op.code())
                    .whenComplete((v, t) -> CL.clReleaseMemObject(view));
        }
        // The operand is in another context: bring it next to the accumulator first.
        cl_mem scratch = c.takeScratch(bytes);
        OpenClBuffer staged = new OpenClBuffer(c, scratch, dtype, new long[] {n}, false);
        return copy(src, srcOffset, staged, 0, bytes)
                .thenCompose(v -> reduceNear(op, a, accOffset, staged, bytes))
                .whenComplete((v, t) -> c.giveScratch(scratch, bytes));
    }

    @Override
    protected void checkComputes(OpenClBuffer on, DType dtype) {
        checkFp64(on, dtype);
    }

    @Override
    public void release(DeviceBuffer buffer) {
        own(buffer).release();
    }

    /** Releases every context this runtime made; buffers still in use become invalid. */
    synchronized void close() {
        for (OpenClContext c : defaults) {
            if (c != null) {
                c.close();
                CL.clReleaseContext(c.context());
            }
        }
        foreign.values().forEach(OpenClContext::close);
        completions.shutdown();
    }

    // ---- helpers ---------------------------------------------------------------------------------------------

    private CompletableFuture<Void> read(OpenClBuffer s, long srcOffset, MemorySegment dst) {
        long from = s.offset() + srcOffset;
        if (dst.isNative()) {
            return s.context().read(s.mem(), from, dst, dst.byteSize());
        }
        // JOCL reads asynchronously only into native memory; a heap destination gets the bytes on completion.
        MemorySegment staging = Arena.ofAuto().allocate(dst.byteSize(), 64);
        return s.context().read(s.mem(), from, staging, dst.byteSize()).thenRun(() -> dst.copyFrom(staging));
    }

    /** {@code segment} itself when it is native memory, else a native copy of it. */
    private static MemorySegment nativeCopy(MemorySegment segment) {
        if (segment.isNative()) {
            return segment;
        }
        MemorySegment copy = Arena.ofAuto().allocate(segment.byteSize(), 64);
        copy.copyFrom(segment);
        return copy;
    }


    private static void checkFp64(OpenClBuffer b, DType dtype) {
        if (dtype == DType.FLOAT64 && !b.context().fp64()) {
            throw new IllegalArgumentException(b.device() + " has no double precision (cl_khr_fp64): float64 cannot"
                    + " be reduced there");
        }
    }

    private OpenClContext defaultContext(Device device) {
        if (!device.type().equals(OpenClRuntimeProvider.TYPE) || device.index() < 0
                || device.index() >= defaults.length) {
            throw new IllegalArgumentException("device " + device + " is not one of the OpenCL devices here: "
                    + infos.stream().map(i -> i.device().toString()).toList());
        }
        synchronized (this) {
            int i = device.index();
            if (defaults[i] == null) {
                cl_context c = CL.clCreateContext(null, 1, new cl_device_id[] {ids.get(i)}, null, null, null);
                defaults[i] = newContext(device, c, ids.get(i));
            }
            return defaults[i];
        }
    }

    private OpenClContext contextOf(cl_context owner) {
        for (OpenClContext c : defaults) {
            if (c != null && c.context().equals(owner)) {
                return c;
            }
        }
        return foreign.computeIfAbsent(owner, c -> {
            cl_device_id id = firstDevice(c);
            int index = ids.indexOf(id);
            if (index < 0) {
                throw new IllegalArgumentException("the cl_mem's context has a device this runtime does not list");
            }
            CL.clRetainContext(c);
            return newContext(new Device(OpenClRuntimeProvider.TYPE, index), c, id);
        });
    }

    private OpenClContext newContext(Device device, cl_context c, cl_device_id id) {
        String extensions = infoString(id, CL_DEVICE_EXTENSIONS);
        long fpConfig = longInfo(id, CL_DEVICE_SINGLE_FP_CONFIG);
        return new OpenClContext(device, c, id, extensions.contains("cl_khr_fp64"),
                (fpConfig & CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT) != 0, completions);
    }

    private static cl_device_id firstDevice(cl_context c) {
        long[] size = new long[1];
        CL.clGetContextInfo(c, CL_CONTEXT_DEVICES, 0, null, size);
        cl_device_id[] devices = new cl_device_id[(int) (size[0] / Sizeof.cl_device_id)];
        CL.clGetContextInfo(c, CL_CONTEXT_DEVICES, size[0], Pointer.to(devices), null);
        return devices[0];
    }

    static List<cl_platform_id> platforms() {
        int[] n = new int[1];
        CL.clGetPlatformIDs(0, null, n);
        cl_platform_id[] platforms = new cl_platform_id[n[0]];
        if (n[0] > 0) {
            CL.clGetPlatformIDs(n[0], platforms, null);
        }
        return List.of(platforms);
    }

    static List<cl_device_id> devices(cl_platform_id platform) {
        int[] n = new int[1];
        try {
            CL.clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, null, n);
        } catch (CLException e) {
            return List.of(); // CL_DEVICE_NOT_FOUND: a platform without devices
        }
        cl_device_id[] devices = new cl_device_id[n[0]];
        CL.clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, n[0], devices, null);
        return List.of(devices);
    }

    private static DeviceInfo describe(Device device, cl_device_id id, String platform) {
        return new DeviceInfo(device, infoString(id, CL_DEVICE_NAME), platform, longInfo(id, CL_DEVICE_GLOBAL_MEM_SIZE),
                infoString(id, CL_DEVICE_VERSION) + (infoString(id, CL_DEVICE_EXTENSIONS).contains("cl_khr_fp64")
                        ? ", fp64" : ", no fp64"));
    }

    private static String infoString(cl_platform_id platform) {
        long[] size = new long[1];
        CL.clGetPlatformInfo(platform, CL_PLATFORM_NAME, 0, null, size);
        byte[] bytes = new byte[(int) size[0]];
        CL.clGetPlatformInfo(platform, CL_PLATFORM_NAME, bytes.length, Pointer.to(bytes), null);
        return cString(bytes);
    }

    private static String infoString(cl_device_id id, int param) {
        long[] size = new long[1];
        CL.clGetDeviceInfo(id, param, 0, null, size);
        byte[] bytes = new byte[(int) size[0]];
        CL.clGetDeviceInfo(id, param, bytes.length, Pointer.to(bytes), null);
        return cString(bytes);
    }

    private static long longInfo(cl_device_id id, int param) {
        long[] v = new long[1];
        CL.clGetDeviceInfo(id, param, Sizeof.cl_ulong, Pointer.to(v), null);
        return v[0];
    }

    private static long memSize(cl_mem mem) {
        long[] v = new long[1];
        CL.clGetMemObjectInfo(mem, CL_MEM_SIZE, Sizeof.size_t, Pointer.to(v), null);
        return v[0];
    }

    static String buildLog(cl_program program, cl_device_id id) {
        long[] size = new long[1];
        CL.clGetProgramBuildInfo(program, id, CL_PROGRAM_BUILD_LOG, 0, null, size);
        byte[] bytes = new byte[(int) size[0]];
        CL.clGetProgramBuildInfo(program, id, CL_PROGRAM_BUILD_LOG, bytes.length, Pointer.to(bytes), null);
        return cString(bytes);
    }

    private static String cString(byte[] bytes) {
        int end = 0;
        while (end < bytes.length && bytes[end] != 0) {
            end++;
        }
        return new String(bytes, 0, end, StandardCharsets.UTF_8).trim();
    }

    /** The element count of {@code shape}. */
    static long numel(long[] shape) {
        return DeviceArguments.numel(shape);
    }
}
