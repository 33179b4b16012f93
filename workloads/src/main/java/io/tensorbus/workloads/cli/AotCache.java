package io.tensorbus.workloads.cli;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The JDK's ahead-of-time cache (JEPs 483, 514 and 515) for the processes {@code tensorbus launch} starts: the
 * classes a training run loaded and linked, and the method profiles it gathered, so that a rank starts without
 * loading them again and its JIT compiles the hot kernels from complete profiles. {@code ./tensorbus} trains
 * one after each build and names it in {@link #CACHE_ENV}.
 *
 * <p>The JDK only takes a cache made with the same class path (it refuses any other, loudly), so the flags go
 * only to children that run on the launcher's own class path, and never where the user chose their own cache
 * or class-data sharing in {@code TENSORBUS_JVM_OPTS}.
 */
final class AotCache {
    /** An AOT cache file every child that runs on the launcher's class path uses ({@code -XX:AOTCache}). */
    static final String CACHE_ENV = "TENSORBUS_AOT_CACHE";

    /**
     * Where rank 0 writes a new AOT cache when it exits ({@code -XX:AOTCacheOutput}): set for a training run.
     * Only rank 0 writes, as two JVMs would write the same file.
     */
    static final String OUTPUT_ENV = "TENSORBUS_AOT_CACHE_OUTPUT";

    private static final String OUTPUT_FLAG = "-XX:AOTCacheOutput=";

    private AotCache() {
    }

    /**
     * The AOT flags for every child: {@code -XX:AOTCacheOutput} when {@link #OUTPUT_ENV} is set, else
     * {@code -XX:AOTCache} when {@link #CACHE_ENV} names an existing file; none when the children run on another
     * class path than the launcher's or {@code userOpts} already hold an AOT or class-data-sharing option.
     */
    static List<String> flags(Map<String, String> env, boolean ownClassPath, List<String> userOpts) {
        boolean userChose = userOpts.stream().anyMatch(f -> f.startsWith("-XX:AOT") || f.startsWith("-Xshare")
                || f.startsWith("-XX:SharedArchiveFile"));
        if (!ownClassPath || userChose) {
            return List.of();
        }
        String output = env.get(OUTPUT_ENV);
        if (output != null && !output.isBlank()) {
            return List.of(OUTPUT_FLAG + output);
        }
        String cache = env.get(CACHE_ENV);
        if (cache != null && !cache.isBlank() && Files.isRegularFile(Path.of(cache))) {
            return List.of("-XX:AOTCache=" + cache);
        }
        return List.of();
    }

    /** {@code command} as rank {@code rank} runs it: without {@code -XX:AOTCacheOutput} unless it is rank 0. */
    static List<String> forRank(List<String> command, int rank) {
        if (rank == 0) {
            return command;
        }
        List<String> cmd = new ArrayList<>(command);
        cmd.removeIf(f -> f.startsWith(OUTPUT_FLAG));
        return cmd;
    }
}
