package io.tensorbus.it;

import io.tensorbus.DType;
import io.tensorbus.Device;
import io.tensorbus.c10d.ReduceOp;
import io.tensorbus.distributed.Distributed;
import io.tensorbus.distributed.InitOptions;
import io.tensorbus.distributed.ProcessGroup;
import io.tensorbus.spi.DeviceRuntimeProvider;
import io.tensorbus.tensor.Tensor;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.jocl.CL;
import org.jocl.Pointer;
import org.jocl.cl_command_queue;
import org.jocl.cl_context;
import org.jocl.cl_device_id;
import org.jocl.cl_mem;
import org.jocl.cl_platform_id;
import org.junit.jupiter.api.Assumptions;

/**
 * One rank of the multi-JVM OpenCL check, started by {@code tensorbus launch}: a group on the {@code opencl}
 * backend all-reduces a {@code cl_mem} that plain JOCL code (its own context and queue, as a user's) created and
 * filled, reads the result back with JOCL, then all-reduces, broadcasts and all-gathers tensors on
 * {@code opencl:0} of 4 KiB and 64 MiB, and all-gathers into one device tensor. Prints {@code OPENCL OK <n> checks} and
 * exits 0, or {@code OPENCL FAILED <step>: <error>} and exits 1.
 */
public final class OpenClCheck {
    private static final Device CL0 = Device.opencl(0);

    private OpenClCheck() {
    }

    /** Skips the calling test where this machine has no OpenCL device, saying why. */
    static void assumeOpenCl(String what) {
        for (DeviceRuntimeProvider p : DeviceRuntimeProvider.all()) {
            if (p.type().equals("opencl")) {
                if (!p.isAvailable()) {
                    String why = what + " skipped: " + p.unavailabilityCause().getMessage();
                    System.err.println("[tensorbus] " + why);
                    Assumptions.abort(why);
                }
                return;
            }
        }
        Assumptions.abort(what + " skipped: no OpenCL runtime on the class path");
    }

    /** A pocl kernel cache of its own for one JVM (pocl crashes when processes share one). */
    static String poclCacheDir(String name) {
        return Path.of(System.getProperty("java.io.tmpdir"), "tensorbus-it-pocl-" + ProcessHandle.current().pid(), name)
                .toString();
    }

    public static void main(String[] args) {
        String step = "init";
        int checks = 0;
        try {
            Duration timeout = Duration.ofSeconds(60);
            ProcessGroup pg = Vals.await(Distributed.initProcessGroup(InitOptions.builder().backend("opencl")
                    .timeout(timeout).build()), timeout, "initProcessGroup");
            int rank = pg.rank();
            int world = pg.size();
            Duration wait = timeout.plusSeconds(10);

            step = "allReduce of the user's cl_mem";
            checks += userClMem(pg, wait);

            for (int n : new int[] {1024, 16 * 1024 * 1024}) {
                step = "allReduce of " + 4L * n + " bytes on opencl:0";
                Tensor t = Tensor.full(rank + 1, DType.FLOAT32, CL0, n);
                Vals.await(pg.allReduce(t, ReduceOp.SUM), wait, step);
                expect(t, world * (world + 1) / 2.0, step);
                checks++;

                step = "broadcast of " + 4L * n + " bytes on opencl:0";
                Tensor b = Tensor.full(rank == world - 1 ? 7 : -1, DType.FLOAT32, CL0, n);
                Vals.await(pg.broadcast(b, world - 1), wait, step);
                expect(b, 7, step);
                checks++;

                step = "allGather of " + 4L * n + " bytes on opencl:0";
                List<Tensor> outs = new ArrayList<>();
                for (int r = 0; r < world; r++) {
                    outs.add(Tensor.zeros(CL0, DType.FLOAT32, n));
                }
                Vals.await(pg.allGather(outs, Tensor.full(10 * rank, DType.FLOAT32, CL0, n)), wait, step);
                for (int r = 0; r < world; r++) {
                    expect(outs.get(r), 10 * r, step + " slot " + r);
                }
                checks++;
            }
            step = "allGatherIntoTensor on opencl:0";
            Tensor flat = Tensor.zeros(CL0, DType.INT64, world * 5);
            Vals.await(pg.allGatherIntoTensor(flat, Tensor.full(rank + 1, DType.INT64, CL0, 5)), wait, step);
            for (int r = 0; r < world; r++) {
                expect(flat.narrow(0, 5 * r, 5), r + 1, step + " block " + r);
            }
            checks++;

            step = "destroy";
            Vals.await(pg.destroy(), Duration.ofSeconds(10), step);
            System.out.println("OPENCL OK " + checks + " checks (rank " + rank + " of " + world + ")");
            System.out.flush();
            System.exit(0);
        } catch (Throwable e) {
            System.out.println("OPENCL FAILED " + step + ": " + e);
            e.printStackTrace();
            System.out.flush();
            System.exit(1);
        }
    }

    /** The user's own JOCL code makes and fills a buffer; tensorbus all-reduces it in place. */
    private static int userClMem(ProcessGroup pg, Duration wait) {
        CL.setExceptionsEnabled(true);
        cl_platform_id[] platforms = new cl_platform_id[1];
        CL.clGetPlatformIDs(1, platforms, null);
        cl_device_id[] devices = new cl_device_id[1];
        CL.clGetDeviceIDs(platforms[0], CL.CL_DEVICE_TYPE_ALL, 1, devices, null);
        cl_context context = CL.clCreateContext(null, 1, devices, null, null, null);
        cl_command_queue queue = CL.clCreateCommandQueueWithProperties(context, devices[0], null, null);
        int n = 300_001;
        ByteBuffer data = ByteBuffer.allocateDirect(4 * n).order(ByteOrder.nativeOrder());
        for (int i = 0; i < n; i++) {
            data.putFloat(4 * i, i % 1000 + pg.rank());
        }
        cl_mem mem = CL.clCreateBuffer(context, CL.CL_MEM_READ_WRITE | CL.CL_MEM_COPY_HOST_PTR, 4L * n,
                Pointer.to(data), null);
        try {
            Tensor t = Tensor.fromDeviceMemory(CL0, mem, DType.FLOAT32, n);
            Vals.await(pg.allReduce(t, ReduceOp.SUM), wait, "allReduce of the user's cl_mem");
            ByteBuffer out = ByteBuffer.allocateDirect(4 * n).order(ByteOrder.nativeOrder());
            CL.clEnqueueReadBuffer(queue, mem, true, 0, 4L * n, Pointer.to(out), 0, null, null);
            int world = pg.size();
            for (int i = 0; i < n; i++) {
                float want = world * (i % 1000) + world * (world - 1) / 2f;
                if (out.getFloat(4 * i) != want) {
                    throw new IllegalStateException("element " + i + " of the user's cl_mem is " + out.getFloat(4 * i)
                            + ", expected " + want);
                }
            }
            return 1;
        } finally {
            CL.clReleaseMemObject(mem);
            CL.clReleaseCommandQueue(queue);
            CL.clReleaseContext(context);
        }
    }

    private static void expect(Tensor t, double value, String what) {
        int n = t.numel();
        for (int i : new int[] {0, n / 2, n - 1}) {
            if (t.getDouble(i) != value) {
                throw new IllegalStateException(what + ": element " + i + " is " + t.getDouble(i) + ", expected "
                        + value);
            }
        }
    }
}
