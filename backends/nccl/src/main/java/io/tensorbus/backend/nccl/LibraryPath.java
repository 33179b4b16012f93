package io.tensorbus.backend.nccl;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Where one of the NVIDIA libraries tensorbus opens is: the path set by its system property or environment
 * variable, else the first of the usual library folders ({@code LD_LIBRARY_PATH}, the distributions' and CUDA's
 * lib folders) and the folders of its pip wheel ({@code site-packages/nvidia/<wheel>/lib} of the Python
 * installations and virtual environment found) that holds it. Searching loads nothing.
 *
 * @param file the file name, as the library's soname
 * @param property the system property that names the file
 * @param env the environment variable that names the file
 * @param wheel the folder under {@code site-packages} of the pip wheel that ships it, or null for none
 * @param hint what to install when it is missing
 */
record LibraryPath(String file, String property, String env, String wheel, String hint) {
    /** NCCL 2. */
    static final LibraryPath NCCL = new LibraryPath("libnccl.so.2", "tensorbus.nccl.library",
            "TENSORBUS_NCCL_LIBRARY", "nvidia/nccl/lib", "the nvidia-nccl-cu12 pip package or a system NCCL 2");
    /** CUDA 12's runtime compiler, which compiles the CUDA kernels. */
    static final LibraryPath NVRTC = new LibraryPath("libnvrtc.so.12", "tensorbus.nvrtc.library",
            "TENSORBUS_NVRTC_LIBRARY", "nvidia/cuda_nvrtc/lib",
            "the nvidia-cuda-nvrtc-cu12 pip package or a CUDA 12 toolkit");
    /** cuBLAS's GEMMs. */
    static final LibraryPath CUBLAS = new LibraryPath("libcublas.so.12", "tensorbus.cublas.library",
            "TENSORBUS_CUBLAS_LIBRARY", "nvidia/cublas/lib", "the nvidia-cublas-cu12 pip package or a CUDA 12 toolkit");
    /** cuBLAS's own dependency, loaded before it. */
    static final LibraryPath CUBLAS_LT = new LibraryPath("libcublasLt.so.12", "tensorbus.cublaslt.library",
            "TENSORBUS_CUBLASLT_LIBRARY", "nvidia/cublas/lib",
            "the nvidia-cublas-cu12 pip package or a CUDA 12 toolkit");
    /** The NVIDIA driver's CUDA library, present only where a driver is installed. */
    static final LibraryPath DRIVER = new LibraryPath("libcuda.so.1", "tensorbus.cuda.library",
            "TENSORBUS_CUDA_LIBRARY", null, "the NVIDIA driver");

    /** The library for this JVM's settings and environment, or what was searched. */
    Result find() {
        return find(System.getProperty(property), System.getenv(), Path.of(System.getProperty("user.home", "/")));
    }

    /** Why the library is missing, for an unavailability cause. */
    String missing(Result r) {
        return file + " not found (searched " + r.searched() + "; set -D" + property + " or " + env
                + " to the file, or install " + hint + ")";
    }

    /**
     * The outcome of a search: the file found, or the places searched (for the unavailability cause).
     *
     * @param path the library, or empty
     * @param searched every place looked at, in order
     */
    record Result(Optional<Path> path, List<String> searched) {
    }

    Result find(String propertyValue, Map<String, String> environment, Path home) {
        List<String> searched = new ArrayList<>();
        boolean byProperty = propertyValue != null && !propertyValue.isBlank();
        String named = byProperty ? propertyValue : environment.get(env);
        if (named != null && !named.isBlank()) {
            Path p = Path.of(named);
            searched.add(p + (byProperty ? " (-D" + property + ")" : " (" + env + ")"));
            return new Result(Files.isRegularFile(p) ? Optional.of(p) : Optional.empty(), searched);
        }
        for (Path dir : candidates(environment, home)) {
            Path p = dir.resolve(file);
            searched.add(dir.toString());
            if (Files.isRegularFile(p)) {
                return new Result(Optional.of(p), searched);
            }
        }
        return new Result(Optional.empty(), searched);
    }

    private List<Path> candidates(Map<String, String> env, Path home) {
        List<Path> dirs = new ArrayList<>();
        String ld = env.get("LD_LIBRARY_PATH");
        if (ld != null) {
            for (String d : ld.split(":")) {
                if (!d.isBlank()) {
                    dirs.add(Path.of(d));
                }
            }
        }
        for (String d : List.of("/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib", "/usr/local/lib",
                "/usr/local/cuda/lib64", "/usr/local/nccl/lib", "/usr/local/nvidia/lib64", "/usr/lib/wsl/lib")) {
            dirs.add(Path.of(d));
        }
        if (wheel == null) {
            return dirs;
        }
        String venv = env.get("VIRTUAL_ENV");
        if (venv != null) {
            dirs.addAll(wheelDirs(Path.of(venv, "lib")));
        }
        dirs.addAll(wheelDirs(home.resolve(".local/lib")));
        dirs.addAll(wheelDirs(Path.of("/usr/local/lib")));
        dirs.addAll(wheelDirs(Path.of("/usr/lib")));
        return dirs;
    }

    /** {@code <lib>/python3.X/{site,dist}-packages/<wheel>} for every Python under {@code lib}. */
    private List<Path> wheelDirs(Path lib) {
        List<Path> out = new ArrayList<>();
        if (!Files.isDirectory(lib)) {
            return out;
        }
        try (DirectoryStream<Path> pythons = Files.newDirectoryStream(lib, "python3*")) {
            for (Path py : pythons) {
                for (String packages : List.of("site-packages", "dist-packages")) {
                    out.add(py.resolve(packages).resolve(wheel));
                }
            }
        } catch (IOException e) {
            return out;
        }
        return out;
    }
}
