package io.tensorbus.backend.nccl;

import java.util.Arrays;
import jcuda.nvrtc.JNvrtc;
import jcuda.nvrtc.nvrtcProgram;
import jcuda.nvrtc.nvrtcResult;

/**
 * Compiles CUDA C++ to PTX with NVRTC, through JCuda's binding. {@code libnvrtc.so.12} is looked for as
 * {@link LibraryPath#NVRTC} says and loaded before JCuda's own native part, so that a pip wheel's copy is found
 * without {@code LD_LIBRARY_PATH}. The PTX targets the highest virtual architecture NVRTC knows that the device
 * runs, and the driver compiles it for the device when the module loads.
 */
final class CudaCompiler {
    /** Built without contracting multiplies and adds, so results match the host's bit for bit. */
    private static final String NO_FMA = "--fmad=false";

    private final int[] architectures;

    /**
     * Loads NVRTC.
     *
     * @throws IllegalStateException when {@code libnvrtc.so.12} is missing or does not load, saying where it was
     *         looked for
     */
    CudaCompiler() {
        LibraryPath.Result found = LibraryPath.NVRTC.find();
        try {
            found.path().ifPresent(p -> System.load(p.toAbsolutePath().toString()));
            int[] n = new int[1];
            JNvrtc.nvrtcGetNumSupportedArchs(n);
            architectures = new int[n[0]];
            JNvrtc.nvrtcGetSupportedArchs(architectures);
        } catch (LinkageError e) {
            throw new IllegalStateException("NVRTC, which compiles the CUDA kernels, did not load: "
                    + (found.path().isPresent() ? e.getMessage() : LibraryPath.NVRTC.missing(found)), e);
        }
    }

    /**
     * The PTX of {@code source} for a device of compute capability {@code capability} (major * 10 + minor).
     *
     * @throws IllegalStateException when NVRTC knows no architecture the device runs, or the source does not
     *         compile (NVRTC's log attached)
     */
    String ptx(String source, String name, int capability) {
        int arch = Arrays.stream(architectures).filter(a -> a <= capability).max().orElseThrow(
                () -> new IllegalStateException("NVRTC compiles for compute capabilities "
                + Arrays.toString(architectures)
                        + ", none of which a device of capability " + capability / 10 + "." + capability % 10
                        + " runs"));
        nvrtcProgram program = new nvrtcProgram();
        check(JNvrtc.nvrtcCreateProgram(program, source, name, 0, null, null), "nvrtcCreateProgram", program);
        try {
            int r = JNvrtc.nvrtcCompileProgram(program, 2, new String[] {"--gpu-architecture=compute_" + arch, NO_FMA});
            check(r, "compiling " + name + " for compute_" + arch, program);
            String[] ptx = new String[1];
            check(JNvrtc.nvrtcGetPTX(program, ptx), "nvrtcGetPTX", program);
            return ptx[0];
        } finally {
            JNvrtc.nvrtcDestroyProgram(program);
        }
    }

    private static void check(int result, String what, nvrtcProgram program) {
        if (result == nvrtcResult.NVRTC_SUCCESS) {
            return;
        }
        String[] log = new String[1];
        JNvrtc.nvrtcGetProgramLog(program, log);
        throw new IllegalStateException(what + " failed: " + nvrtcResult.stringFor(result)
                + (log[0] == null || log[0].isBlank() ? "" : "\n" + log[0]));
    }
}
