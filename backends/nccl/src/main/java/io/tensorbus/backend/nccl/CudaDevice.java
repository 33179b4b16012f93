package io.tensorbus.backend.nccl;

import io.tensorbus.Device;
import io.tensorbus.spi.DeviceBuffer;
import io.tensorbus.spi.KernelSource;
import io.tensorbus.spi.support.DeviceKernels;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import jcuda.Pointer;
import jcuda.driver.CUcontext;
import jcuda.driver.CUdevice;
import jcuda.driver.CUdevice_attribute;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUevent;
import jcuda.driver.CUevent_flags;
import jcuda.driver.CUfunction;
import jcuda.driver.CUmodule;
import jcuda.driver.CUresult;
import jcuda.driver.CUstream;
import jcuda.driver.CUstream_flags;

import static jcuda.driver.JCudaDriver.cuCtxSetCurrent;
import static jcuda.driver.JCudaDriver.cuDeviceGet;
import static jcuda.driver.JCudaDriver.cuDeviceGetAttribute;
import static jcuda.driver.JCudaDriver.cuDevicePrimaryCtxRetain;
import static jcuda.driver.JCudaDriver.cuEventCreate;
import static jcuda.driver.JCudaDriver.cuEventDestroy;
import static jcuda.driver.JCudaDriver.cuEventQuery;
import static jcuda.driver.JCudaDriver.cuEventRecord;
import static jcuda.driver.JCudaDriver.cuLaunchKernel;
import static jcuda.driver.JCudaDriver.cuMemAlloc;
import static jcuda.driver.JCudaDriver.cuMemAllocAsync;
import static jcuda.driver.JCudaDriver.cuMemFree;
import static jcuda.driver.JCudaDriver.cuMemFreeAsync;
import static jcuda.driver.JCudaDriver.cuMemsetD8Async;
import static jcuda.driver.JCudaDriver.cuModuleGetFunction;
import static jcuda.driver.JCudaDriver.cuModuleLoadData;
import static jcuda.driver.JCudaDriver.cuStreamAddCallback;
import static jcuda.driver.JCudaDriver.cuStreamCreate;

/**
 * One CUDA device as the runtime and the nccl backend use it: its primary context (shared with the user's own
 * JCuda or CUDA code, as the runtime API shares it), one non-blocking stream on which every operation of the
 * device is queued in call order, the kernels of {@link DeviceKernels} compiled by NVRTC on first use, and
 * pinned host memory for copies. Any thread may call it: each call makes the context current first. Completion
 * is observed with a stream callback, handed to the runtime's completion thread, never by blocking.
 */
final class CudaDevice implements CudaStream {
    /** Threads per block of every element-wise launch. */
    static final int BLOCK = 256;

    private final Device device;
    private final CUcontext context = new CUcontext();
    private final Stream stream = new Stream();
    private final Executor completions;
    private CublasGemm blas;
    private boolean blasTried;
    private final int capability;
    private final boolean memoryPools;
    private final long maxBlocks;
    private final CudaCompiler compiler;
    private final PinnedStaging staging;
    private final Map<String, CUfunction> functions = new ConcurrentHashMap<>();
    private final Map<Long, Event> events = new ConcurrentHashMap<>();
    private final Map<String, CUmodule> modules = new ConcurrentHashMap<>();
    private volatile CUmodule collectives;
    private volatile CUmodule tensors;

    /** A stream whose raw {@code CUstream} handle NCCL can be given. */
    private static final class Stream extends CUstream {
        long handle() {
            return getNativePointer();
        }
    }

    /** An event whose raw handle keys it. */
    private static final class Event extends CUevent {
        long handle() {
            return getNativePointer();
        }
    }

    /** Device memory whose raw address kernels and NCCL are given. */
    static final class Address extends CUdeviceptr {
        long value() {
            return getNativePointer();
        }
    }

    CudaDevice(Device device, Executor completions, CudaCompiler compiler) {
        this.device = device;
        this.completions = completions;
        this.compiler = compiler;
        CUdevice cu = new CUdevice();
        check(cuDeviceGet(cu, device.index()), "cuDeviceGet");
        check(cuDevicePrimaryCtxRetain(context, cu), "cuDevicePrimaryCtxRetain");
        makeCurrent();
        check(cuStreamCreate(stream, CUstream_flags.CU_STREAM_NON_BLOCKING), "cuStreamCreate");
        this.capability = 10 * attribute(cu, CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)
                + attribute(cu, CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
        this.memoryPools = attribute(cu, CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED) != 0;
        this.maxBlocks = attribute(cu, CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X);
        this.staging = new PinnedStaging(this::makeCurrent);
    }

    Device device() {
        return device;
    }

    PinnedStaging staging() {
        return staging;
    }

    /** The stream as JCuda takes it. */
    CUstream stream() {
        return stream;
    }

    /**
     * cuBLAS on this device, opened on first use; null (and the reason printed once) where it cannot load, so
     * that GEMMs keep the dialect's own kernel.
     */
    synchronized CublasGemm blas() {
        if (!blasTried) {
            blasTried = true;
            try {
                blas = CublasGemm.open(this);
            } catch (IllegalStateException e) {
                System.err.println("[tensorbus] " + device + ": GEMMs run tensorbus's own kernel: " + e.getMessage());
            }
        }
        return blas;
    }

    /** Makes this device's primary context current on the calling thread (cheap; CUDA keeps it per thread). */
    @Override
    public void makeCurrent() {
        check(cuCtxSetCurrent(context), "cuCtxSetCurrent");
    }

    CUcontext context() {
        return context;
    }

    // ---- CudaStream (the nccl backend's view) ------------------------------------------------------------------

    @Override
    public long handle() {
        return stream.handle();
    }

    @Override
    public long recordEvent() {
        makeCurrent();
        Event e = new Event();
        check(cuEventCreate(e, CUevent_flags.CU_EVENT_DISABLE_TIMING), "cuEventCreate");
        check(cuEventRecord(e, stream), "cuEventRecord");
        events.put(e.handle(), e);
        return e.handle();
    }

    @Override
    public boolean isDone(long event) {
        makeCurrent();
        int r = cuEventQuery(event(event));
        if (r == CUresult.CUDA_ERROR_NOT_READY) {
            return false;
        }
        check(r, "cuEventQuery");
        return true;
    }

    @Override
    public void releaseEvent(long event) {
        Event e = events.remove(event);
        if (e != null) {
            makeCurrent();
            cuEventDestroy(e);
        }
    }

    @Override
    public long address(DeviceBuffer buffer) {
        if (buffer instanceof CudaBuffer b && b.device().equals(device)) {
            return b.address();
        }
        throw new IllegalArgumentException("buffer " + buffer + " is not CUDA memory of " + device + " (it is on "
                + buffer.device() + "); the nccl backend of this group works on " + device);
    }

    private Event event(long handle) {
        Event e = events.get(handle);
        if (e == null) {
            throw new IllegalArgumentException("no event " + Long.toHexString(handle) + " was recorded on " + device);
        }
        return e;
    }

    // ---- memory --------------------------------------------------------------------------------------------------

    /** {@code bytes} of zeroed device memory, ordered on the stream; its address (0 for no bytes). */
    long allocate(long bytes) {
        if (bytes == 0) {
            return 0;
        }
        makeCurrent();
        Address p = new Address();
        check(memoryPools ? cuMemAllocAsync(p, bytes, stream) : cuMemAlloc(p, bytes),
                "allocating " + bytes + " bytes on " + device);
        check(cuMemsetD8Async(p, (byte) 0, bytes, stream), "cuMemsetD8Async");
        return p.value();
    }

    /** Frees memory {@link #allocate} returned once the work queued before has finished. */
    void free(long address) {
        if (address == 0) {
            return;
        }
        makeCurrent();
        if (memoryPools) {
            check(cuMemFreeAsync(at(address), stream), "cuMemFreeAsync");
        } else {
            afterQueuedWork("free").thenRunAsync(() -> {
                makeCurrent();
                cuMemFree(at(address));
            }, completions);
        }
    }

    /** A JCuda pointer to device address {@code address}. */
    static CUdeviceptr at(long address) {
        return new CUdeviceptr().withByteOffset(address);
    }

    // ---- kernels -------------------------------------------------------------------------------------------------

    /** Launches {@code kernel} over {@code n} elements; completes when it has run. */
    CompletableFuture<Void> launch(String kernel, long n, Object... args) {
        long blocks = (n + BLOCK - 1) / BLOCK;
        if (blocks > maxBlocks) {
            throw new IllegalArgumentException(kernel + " over " + n + " elements needs " + blocks + " blocks; "
                    + device + " launches at most " + maxBlocks);
        }
        return launch(kernel, (int) blocks, BLOCK, args);
    }

    /**
     * Launches kernel {@code kernel} of {@code program} over {@code items} work items in blocks of
     * {@code groupSize} threads (0: the element-wise block size, the grid rounded up to it).
     */
    CompletableFuture<Void> launch(KernelSource program, String kernel, long items, int groupSize, Object... args) {
        int threads = groupSize == 0 ? BLOCK : groupSize;
        long blocks = (items + threads - 1) / threads;
        if (blocks > maxBlocks) {
            throw new IllegalArgumentException(kernel + " over " + items + " items needs " + blocks + " blocks; "
                    + device + " launches at most " + maxBlocks);
        }
        CUfunction f = functions.computeIfAbsent(program.name() + "/" + kernel, k -> {
            CUfunction fn = new CUfunction();
            check(cuModuleGetFunction(fn, module(program), kernel), "cuModuleGetFunction(" + kernel + ")");
            return fn;
        });
        return launch(f, kernel, (int) blocks, threads, args);
    }

    /** Launches {@code kernel} as one block of {@code threads}. */
    CompletableFuture<Void> launchOneBlock(String kernel, int threads, Object... args) {
        return launch(kernel, 1, threads, args);
    }

    private CompletableFuture<Void> launch(String kernel, int blocks, int threads, Object[] args) {
        return launch(function(kernel), kernel, blocks, threads, args);
    }

    private CompletableFuture<Void> launch(CUfunction function, String kernel, int blocks, int threads,
                                           Object[] args) {
        makeCurrent();
        Pointer[] params = new Pointer[args.length];
        for (int i = 0; i < args.length; i++) {
            params[i] = switch (args[i]) {
                case Long v -> Pointer.to(new long[] {v});
                case Integer v -> Pointer.to(new int[] {v});
                case Double v -> Pointer.to(new double[] {v});
                case Float v -> Pointer.to(new float[] {v});
                default -> throw new IllegalArgumentException("kernel argument " + args[i]);
            };
        }
        check(cuLaunchKernel(function, blocks, 1, 1, threads, 1, 1, 0, stream, Pointer.to(params), null),
                "launching " + kernel + " on " + device);
        return afterQueuedWork(kernel);
    }

    /**
     * A future completed, on the completion thread, once the work queued so far has run; failed naming
     * {@code what} when the stream reports an error.
     */
    CompletableFuture<Void> afterQueuedWork(String what) {
        makeCurrent();
        CompletableFuture<Void> done = new CompletableFuture<>();
        // A stream callback, unlike a host function, also runs when the stream failed, with the error.
        check(cuStreamAddCallback(stream, (s, status, data) -> completions.execute(() -> {
            if (status == CUresult.CUDA_SUCCESS) {
                done.complete(null);
            } else {
                done.completeExceptionally(new IllegalStateException(what + " on " + device + " failed: "
                        + CUresult.stringFor(status)));
            }
        }), null, 0), "cuStreamAddCallback");
        return done;
    }

    private CUfunction function(String kernel) {
        return functions.computeIfAbsent(kernel, k -> {
            CUfunction f = new CUfunction();
            check(cuModuleGetFunction(f, module(k), k), "cuModuleGetFunction(" + k + ")");
            return f;
        });
    }

    /** A caller's program, compiled and loaded on first use. */
    private CUmodule module(KernelSource program) {
        return modules.computeIfAbsent(program.name(), n -> load(compiler.ptx(DeviceKernels.program(
                DeviceKernels.Dialect.CUDA, program), n + ".cu", capability), n));
    }

    private CUmodule load(String ptx, String name) {
        CUmodule m = new CUmodule();
        check(cuModuleLoadData(m, ptx), "loading the " + name + " kernels on " + device + " (a driver older than "
                + "NVRTC refuses its PTX: update the driver or use an NVRTC of the driver's CUDA version)");
        return m;
    }

    /** The module holding {@code kernel}, compiled and loaded on first use. */
    private synchronized CUmodule module(String kernel) {
        boolean collective = kernel.startsWith("reduce_") || kernel.startsWith("divide_");
        CUmodule m = collective ? collectives : tensors;
        if (m == null) {
            String source = collective ? DeviceKernels.collectives(DeviceKernels.Dialect.CUDA, true)
                    : DeviceKernels.tensors(DeviceKernels.Dialect.CUDA);
            String ptx = compiler.ptx(source, collective ? "collectives.cu" : "tensors.cu", capability);
            m = load(ptx, collective ? "collective" : "tensor");
            if (collective) {
                collectives = m;
            } else {
                tensors = m;
            }
        }
        return m;
    }

    private static int attribute(CUdevice cu, int attribute) {
        int[] v = new int[1];
        check(cuDeviceGetAttribute(v, attribute, cu), "cuDeviceGetAttribute(" + attribute + ")");
        return v[0];
    }

    /**
     * Throws when a driver call failed, naming the call and CUDA's error (JCuda's exceptions stay off: turning
     * them on is global and would change the user's own JCuda code).
     */
    static void check(int result, String what) {
        if (result != CUresult.CUDA_SUCCESS) {
            throw new IllegalStateException(what + " failed: " + CUresult.stringFor(result));
        }
    }

    @Override
    public String toString() {
        return device + " (compute capability " + capability / 10 + "." + capability % 10 + ")";
    }
}
