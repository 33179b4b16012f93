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
 * Where {@code libnccl.so.2} is: the path set by the system property {@value #PROPERTY} or the environment
 * variable {@value #ENV}, else the first of the usual library folders ({@code LD_LIBRARY_PATH}, the
 * distributions' and CUDA's lib folders) and the folders of a pip {@code nvidia-nccl} wheel
 * ({@code site-packages/nvidia/nccl/lib} of the Python installations and virtual environment found) that holds it.
 */
final class NcclLibraryPath {
    /** The system property that names the library file. */
    static final String PROPERTY = "tensorbus.nccl.library";
    /** The environment variable that names the library file. */
    static final String ENV = "TENSORBUS_NCCL_LIBRARY";
    /** The file name NCCL 2 installs. */
    static final String FILE = "libnccl.so.2";

    private NcclLibraryPath() {
    }

    /** The library for this JVM's settings and environment, or what was searched. */
    static Result find() {
        return find(System.getProperty(PROPERTY), System.getenv(), Path.of(System.getProperty("user.home", "/")));
    }

    /**
     * The outcome of a search: the file found, or the places searched (for the unavailability cause).
     *
     * @param path the library, or empty
     * @param searched every place looked at, in order
     */
    record Result(Optional<Path> path, List<String> searched) {
    }

    static Result find(String property, Map<String, String> env, Path home) {
        List<String> searched = new ArrayList<>();
        String named = property != null && !property.isBlank() ? property : env.get(ENV);
        if (named != null && !named.isBlank()) {
            Path p = Path.of(named);
            searched.add(p + (property != null && !property.isBlank() ? " (-D" + PROPERTY + ")" : " (" + ENV + ")"));
            return new Result(Files.isRegularFile(p) ? Optional.of(p) : Optional.empty(), searched);
        }
        for (Path dir : candidates(env, home)) {
            Path p = dir.resolve(FILE);
            searched.add(dir.toString());
            if (Files.isRegularFile(p)) {
                return new Result(Optional.of(p), searched);
            }
        }
        return new Result(Optional.empty(), searched);
    }

    private static List<Path> candidates(Map<String, String> env, Path home) {
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
                "/usr/local/cuda/lib64", "/usr/local/nccl/lib")) {
            dirs.add(Path.of(d));
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

    /** {@code <lib>/python3.X/{site,dist}-packages/nvidia/nccl/lib} for every Python under {@code lib}. */
    private static List<Path> wheelDirs(Path lib) {
        List<Path> out = new ArrayList<>();
        if (!Files.isDirectory(lib)) {
            return out;
        }
        try (DirectoryStream<Path> pythons = Files.newDirectoryStream(lib, "python3*")) {
            for (Path py : pythons) {
                for (String packages : List.of("site-packages", "dist-packages")) {
                    out.add(py.resolve(packages).resolve("nvidia/nccl/lib"));
                }
            }
        } catch (IOException e) {
            return out;
        }
        return out;
    }
}
