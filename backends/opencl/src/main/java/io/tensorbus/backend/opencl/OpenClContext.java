package io.tensorbus.backend.opencl;

import static org.jocl.CL.CL_COMPLETE;
import static org.jocl.CL.CL_MEM_READ_WRITE;

import io.tensorbus.Device;
import io.tensorbus.spi.KernelSource;
import io.tensorbus.spi.support.DeviceKernels;
import java.lang.foreign.MemorySegment;
import java.lang.ref.Reference;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.function.BiConsumer;
import org.jocl.CL;
import org.jocl.CLException;
import org.jocl.Pointer;
import org.jocl.Sizeof;
import org.jocl.cl_command_queue;
import org.jocl.cl_context;
import org.jocl.cl_device_id;
import org.jocl.cl_event;
import org.jocl.cl_kernel;
import org.jocl.cl_mem;
import org.jocl.cl_program;

/**
 * One OpenCL context on one device, as the runtime uses it: an in-order command queue, the collectives' kernels
 * built for the context, and the device events that complete futures. The runtime has one per device for the
 * buffers it allocates, and one per foreign context whose {@code cl_mem}s the user wrapped (kernels and copies
 * must run in the context that owns the memory).
 *
 * <p>Commands are only enqueued, never waited for: a future completes from the event's callback, handed to
 * {@code completions} because OpenCL forbids slow work in its callback thread.
 */
final class OpenClContext {
    /** Global work sizes are rounded up to this, so that the driver can pick a useful work-group size. */
    private static final long GROUP = 256;
    /**
     * The build option for IEEE float32 division, which OpenCL otherwise allows to be 2.5 ulp off (AVG must match
     * the host's correctly rounded quotient); only passed to devices that report support for it.
     */
    static final String CORRECT_DIVISION = "-cl-fp32-correctly-rounded-divide-sqrt";
    /** At most this much scratch memory is kept for reuse, in bytes. */
    private static final long MAX_SCRATCH_BYTES = 256L << 20;

    private final Device device;
    private final cl_context context;
    private final cl_device_id deviceId;
    private final cl_command_queue queue;
    private final boolean fp64;
    private final String buildOptions;
    private final Executor completions;
    private final Map<String, cl_kernel> kernels = new ConcurrentHashMap<>();
    /** The work-group size of every element-wise launch: one size, so that drivers that specialise per size
     *  (pocl compiles a work-group function for each) compile each kernel once. */
    private final long groupSize;
    /** Device scratch memory of finished reductions, kept for the next ones, by size in bytes. */
    private final Map<Long, ArrayDeque<cl_mem>> scratch = new HashMap<>();
    private long scratchBytes;
    /** Programs of callers' kernels ({@link KernelSource}), by name, built on first launch. */
    private final Map<String, cl_program> programs = new ConcurrentHashMap<>();
    /** The collectives' program and the tensors' (built only when a tensor op first runs here). */
    private volatile cl_program collectives;
    private volatile cl_program tensors;

    OpenClContext(Device device, cl_context context, cl_device_id deviceId, boolean fp64, boolean correctDivision,
                  Executor completions) {
        this.device = device;
        this.context = context;
        this.deviceId = deviceId;
        this.fp64 = fp64;
        this.buildOptions = correctDivision ? CORRECT_DIVISION : "";
        this.completions = completions;
        this.queue = CL.clCreateCommandQueueWithProperties(context, deviceId, null, null);
        long[] max = new long[1];
        CL.clGetDeviceInfo(deviceId, CL.CL_DEVICE_MAX_WORK_GROUP_SIZE, Sizeof.size_t, Pointer.to(max), null);
        this.groupSize = Math.max(1, Math.min(GROUP, max[0]));
    }

    /** A read-only memory object over native host memory, which stays untouched until the commands using it end. */
    cl_mem hostView(MemorySegment host) {
        return CL.clCreateBuffer(context, CL.CL_MEM_READ_ONLY | CL.CL_MEM_USE_HOST_PTR, host.byteSize(),
                Pointer.to(host.asByteBuffer()), null);
    }

    /**
     * Scratch memory of {@code bytes} bytes (not zeroed): a buffer an earlier reduction gave back, else a new one.
     * Fresh memory costs page faults on first touch (pocl: 8 ms to reduce 16 MiB into new memory, 0.3 ms into
     * used), so a collective's chunks reuse the same few buffers.
     */
    synchronized cl_mem takeScratch(long bytes) {
        ArrayDeque<cl_mem> free = scratch.get(bytes);
        if (free != null && !free.isEmpty()) {
            scratchBytes -= bytes;
            return free.pop();
        }
        return CL.clCreateBuffer(context, CL_MEM_READ_WRITE, bytes, null, null);
    }

    /** Gives scratch memory back once the commands that used it finished; beyond a bound it is freed. */
    synchronized void giveScratch(cl_mem mem, long bytes) {
        if (scratchBytes + bytes > MAX_SCRATCH_BYTES) {
            CL.clReleaseMemObject(mem);
            return;
        }
        scratch.computeIfAbsent(bytes, b -> new ArrayDeque<>()).push(mem);
        scratchBytes += bytes;
    }

    Device device() {
        return device;
    }

    cl_context context() {
        return context;
    }

    boolean fp64() {
        return fp64;
    }

    /** A new zero-filled memory object of {@code bytes} bytes, or null for zero bytes. */
    cl_mem allocate(long bytes) {
        if (bytes == 0) {
            return null;
        }
        cl_mem mem = CL.clCreateBuffer(context, CL_MEM_READ_WRITE, bytes, null, null);
        synchronized (queue) {
            CL.clEnqueueFillBuffer(queue, mem, Pointer.to(new byte[] {0}), 1, 0, bytes, 0, null, null);
        }
        return mem;
    }

    /** Copies {@code bytes} bytes of native host memory {@code src} into {@code dst} at {@code dstOffset}. */
    CompletableFuture<Void> write(MemorySegment src, cl_mem dst, long dstOffset, long bytes) {
        return enqueue("copy host to " + device, () -> {
            cl_event e = new cl_event();
            CL.clEnqueueWriteBuffer(queue, dst, false, dstOffset, bytes, Pointer.to(src.asByteBuffer()), 0, null, e);
            return e;
        }, src);
    }

    /** Copies {@code bytes} bytes of {@code src} at {@code srcOffset} into native host memory {@code dst}. */
    CompletableFuture<Void> read(cl_mem src, long srcOffset, MemorySegment dst, long bytes) {
        return enqueue("copy " + device + " to host", () -> {
            cl_event e = new cl_event();
            CL.clEnqueueReadBuffer(queue, src, false, srcOffset, bytes, Pointer.to(dst.asByteBuffer()), 0, null, e);
            return e;
        }, dst);
    }

    /** Copies between two memory objects of this context. */
    CompletableFuture<Void> copy(cl_mem src, long srcOffset, cl_mem dst, long dstOffset, long bytes) {
        return enqueue("copy on " + device, () -> {
            cl_event e = new cl_event();
            CL.clEnqueueCopyBuffer(queue, src, dst, srcOffset, dstOffset, bytes, 0, null, e);
            return e;
        }, null);
    }

    /**
     * Runs kernel {@code name} over {@code n} work items with {@code args}: {@link cl_mem}s, {@link Long}s (OpenCL
     * {@code ulong}) and {@link Integer}s. {@code keepAlive} stays reachable until the kernel finished.
     */
    CompletableFuture<Void> run(String name, long n, Object keepAlive, Object... args) {
        return launch(name, (n + groupSize - 1) / groupSize * groupSize, new long[] {groupSize}, keepAlive, args);
    }

    /** Runs kernel {@code name} as one work-group of {@code items} work items (a reduction to one value). */
    CompletableFuture<Void> runOneGroup(String name, long items, Object keepAlive, Object... args) {
        return launch(name, items, new long[] {items}, keepAlive, args);
    }

    /**
     * Runs kernel {@code name} of {@code program} over {@code items} work items in groups of {@code groupSize}
     * (0: this context's element-wise size, the global size rounded up to it).
     */
    CompletableFuture<Void> run(KernelSource program, String name, long items, int groupSize, Object... args) {
        long group = groupSize == 0 ? groupSize() : groupSize;
        long global = (items + group - 1) / group * group;
        return enqueue("kernel " + name + " on " + device, () -> {
            cl_kernel kernel = kernels.computeIfAbsent(program.name() + "/" + name,
                    k -> CL.clCreateKernel(program(program), name, null));
            return enqueueKernel(kernel, global, new long[] {group}, args);
        }, null);
    }

    /** The work-group size of element-wise launches. */
    long groupSize() {
        return groupSize;
    }

    /**
     * Enqueues a command that a library issues on this context's queue itself (CLBlast): {@code command} gets the
     * queue and the event to fill; the future completes when the event does.
     */
    CompletableFuture<Void> enqueueOnQueue(String what, BiConsumer<cl_command_queue, cl_event> command) {
        return enqueue(what + " on " + device, () -> {
            cl_event e = new cl_event();
            synchronized (queue) {
                command.accept(queue, e);
            }
            return e;
        }, null);
    }

    /**
     * Fills {@code bytes} bytes of {@code dst} from {@code offset} with repetitions of {@code pattern} (one element).
     */
    CompletableFuture<Void> fill(cl_mem dst, byte[] pattern, long offset, long bytes) {
        return enqueue("fill on " + device, () -> {
            cl_event e = new cl_event();
            CL.clEnqueueFillBuffer(queue, dst, Pointer.to(pattern), pattern.length, offset, bytes, 0, null, e);
            return e;
        }, null);
    }

    private CompletableFuture<Void> launch(String name, long global, long[] local, Object keepAlive, Object[] args) {
        return enqueue("kernel " + name + " on " + device, () -> enqueueKernel(kernel(name), global, local, args),
                keepAlive);
    }

    private cl_event enqueueKernel(cl_kernel kernel, long global, long[] local, Object[] args) {
        cl_event e = new cl_event();
        // clSetKernelArg changes the shared kernel object: arguments and launch must not interleave.
        synchronized (kernel) {
            for (int i = 0; i < args.length; i++) {
                setArg(kernel, i, args[i]);
            }
            synchronized (queue) {
                CL.clEnqueueNDRangeKernel(queue, kernel, 1, null, new long[] {global}, local, 0, null, e);
            }
        }
        return e;
    }

    private static void setArg(cl_kernel kernel, int index, Object arg) {
        switch (arg) {
            case cl_mem m -> CL.clSetKernelArg(kernel, index, Sizeof.cl_mem, Pointer.to(m));
            case Long l -> CL.clSetKernelArg(kernel, index, Sizeof.cl_ulong, Pointer.to(new long[] {l}));
            case Integer v -> CL.clSetKernelArg(kernel, index, Sizeof.cl_int, Pointer.to(new int[] {v}));
            case Float v -> CL.clSetKernelArg(kernel, index, Sizeof.cl_float, Pointer.to(new float[] {v}));
            case Double v -> CL.clSetKernelArg(kernel, index, Sizeof.cl_double, Pointer.to(new double[] {v}));
            default -> throw new IllegalArgumentException("kernel argument " + arg);
        }
    }

    private cl_kernel kernel(String name) {
        return kernels.computeIfAbsent(name, k -> CL.clCreateKernel(program(k), k, null));
    }

    /** The program holding kernel {@code name}, built on first use. */
    private synchronized cl_program program(String name) {
        if (name.startsWith("reduce_") || name.startsWith("divide_")) {
            if (collectives == null) {
                collectives = build(DeviceKernels.collectives(DeviceKernels.Dialect.OPENCL, fp64));
            }
            return collectives;
        }
        if (!fp64) {
            throw new IllegalArgumentException("kernel " + name + ": tensor kernels compute through float64, and "
                    + device + " has no double precision (cl_khr_fp64)");
        }
        if (tensors == null) {
            tensors = build(DeviceKernels.tensors(DeviceKernels.Dialect.OPENCL));
        }
        return tensors;
    }

    /** A caller's program, built on first use. */
    private cl_program program(KernelSource program) {
        if (!fp64) {
            throw new IllegalArgumentException("kernels of " + program.name() + " need double precision, and "
                    + device + " has no cl_khr_fp64");
        }
        return programs.computeIfAbsent(program.name(),
                n -> build(DeviceKernels.program(DeviceKernels.Dialect.OPENCL, program), n));
    }

    private cl_program build(String source) {
        return build(source, "tensorbus");
    }

    private cl_program build(String source, String name) {
        cl_program p = CL.clCreateProgramWithSource(context, 1, new String[] {source}, null, null);
        try {
            CL.clBuildProgram(p, 1, new cl_device_id[] {deviceId}, buildOptions, null, null);
        } catch (CLException e) {
            throw new IllegalStateException("building the OpenCL kernels of " + name + " for " + device + " failed: "
                    + e.getMessage() + "\n" + OpenClRuntime.buildLog(p, deviceId), e);
        }
        return p;
    }

    /** Something that enqueues one command and returns its event. */
    private interface Command {
        cl_event enqueue();
    }

    private CompletableFuture<Void> enqueue(String what, Command command, Object keepAlive) {
        CompletableFuture<Void> promise = new CompletableFuture<>();
        cl_event event;
        try {
            event = command.enqueue();
            CL.clFlush(queue);
        } catch (IllegalArgumentException e) {
            return CompletableFuture.failedFuture(e);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(new IllegalStateException(what + " failed: " + e.getMessage(), e));
        }
        CL.clSetEventCallback(event, CL_COMPLETE, (ev, status, data) -> completions.execute(() -> {
            CL.clReleaseEvent(ev);
            Reference.reachabilityFence(keepAlive);
            if (status < 0) {
                promise.completeExceptionally(new IllegalStateException(what + " failed with "
                        + CL.stringFor_errorCode(status)));
            } else {
                promise.complete(null);
            }
        }), null);
        return promise;
    }

    /** Releases the queue, kernels and program (the runtime's buffers are released by their owners). */
    void close() {
        kernels.values().forEach(CL::clReleaseKernel);
        kernels.clear();
        synchronized (this) {
            scratch.values().forEach(q -> q.forEach(CL::clReleaseMemObject));
            scratch.clear();
        }
        programs.values().forEach(CL::clReleaseProgram);
        programs.clear();
        for (cl_program p : new cl_program[] {collectives, tensors}) {
            if (p != null) {
                CL.clReleaseProgram(p);
            }
        }
        CL.clReleaseCommandQueue(queue);
    }
}
