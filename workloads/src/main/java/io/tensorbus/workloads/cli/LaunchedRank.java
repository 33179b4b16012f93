package io.tensorbus.workloads.cli;

import com.sun.management.OperatingSystemMXBean;
import io.tensorbus.distributed.metrics.PrometheusEndpoint;
import io.tensorbus.internal.distributed.AdvertisedHost;
import io.tensorbus.internal.distributed.ProcessExit;
import io.tensorbus.workloads.demo.ProgressBar;
import java.io.IOException;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * One child JVM of {@code tensorbus launch}: its ranks (one, or with {@code --ranks-as-threads} all of its node's),
 * its process, and the threads forwarding its output.
 */
final class LaunchedRank {
    /**
     * JVM flags every tensorbus process needs (the Vector API, native access), UTF-8 output, and leave for
     * {@code sun.misc.Unsafe}'s memory access, which Hazelcast's shaded JCTools uses (ranks that meet through
     * {@code cluster://}) and JDK 24 and later warn about otherwise. No package is opened: a user's program sees
     * the modules as {@code java} shows them.
     */
    static final List<String> JVM_FLAGS = List.of("--add-modules", "jdk.incubator.vector",
            "--enable-native-access=ALL-UNNAMED", "-Dstdout.encoding=UTF-8", "-Dstderr.encoding=UTF-8",
            "--sun-misc-unsafe-memory-access=allow");
    /**
     * JIT flags for compute ranks, before the user's (which override them). Without profiled loop predication C2
     * no longer speculates, from the first calls' profile, on the sizes later calls of a vector kernel bring: each
     * such guess that failed cost a deoptimization and a recompilation of the kernel, up to four per kernel, all
     * through the first epochs while two ranks share the cores (the main job's C2 time 9.1-10.3 s over both ranks
     * -> 7.9-8.7 s; {@code bench ddp --world 2} 9,054-10,736 -> 10,709-12,138 samples/s; AMD EPYC, 2 cores,
     * 2026-11-25).
     */
    static final List<String> JIT_FLAGS = List.of("-XX:-UseProfiledLoopPredicate");

    private final int rank;
    private final int localRank;
    /** The ranks this JVM runs, from {@link #rank}: one, or its node's as threads. */
    private final int count;
    private final Process process;
    private final Path errorFile;
    private final Thread stdout;
    private final Thread stderr;
    /** When the process ended, in epoch milliseconds; 0 while it runs. */
    private volatile long exitedAt;

    private LaunchedRank(int rank, int localRank, int count, Process process, Path errorFile, Thread stdout,
            Thread stderr) {
        this.rank = rank;
        this.localRank = localRank;
        this.count = count;
        this.process = process;
        this.errorFile = errorFile;
        this.stdout = stdout;
        this.stderr = stderr;
        process.onExit().thenRun(() -> exitedAt = System.currentTimeMillis());
    }

    /**
     * Whether this rank's {@code main} ended with an exception that came from losing a peer
     * ({@link ProcessExit#LOST_A_PEER}): such a rank failed because another did, so it is the cause of a job's
     * failure only when no other rank could be.
     */
    boolean lostAPeer() {
        return errorLines().contains(ProcessExit.LOST_A_PEER);
    }

    /** The exception that ended this rank's {@code main}, as it wrote it (its first line); "" when none. */
    String error() {
        List<String> lines = errorLines();
        return lines.isEmpty() ? "" : lines.get(0).strip();
    }

    private List<String> errorLines() {
        try {
            return Files.readAllLines(errorFile);
        } catch (IOException e) {
            return List.of();
        }
    }

    /** Whether this rank wrote the exception that ended its {@code main}: it is on its way out by itself. */
    boolean wroteItsError() {
        try {
            return Files.size(errorFile) > 0;
        } catch (IOException e) {
            return false;
        }
    }

    /** Whether this rank's failure more likely caused the job's than {@code other}'s: its own, else the earlier. */
    boolean causedBefore(LaunchedRank other) {
        boolean mine = !lostAPeer();
        boolean theirs = !other.lostAPeer();
        return mine != theirs ? mine : failedAt() < other.failedAt();
    }

    /**
     * When this rank failed, in epoch milliseconds: when its {@code main} wrote the exception that ended it, else
     * when it exited with a non-zero status; {@link Long#MAX_VALUE} when it has not failed (yet).
     */
    long failedAt() {
        if (wroteItsError()) {
            try {
                return Files.getLastModifiedTime(errorFile).toMillis();
            } catch (IOException e) {
                // Gone since: the exit tells.
            }
        }
        if (process.isAlive() || process.exitValue() == 0) {
            return Long.MAX_VALUE;
        }
        long exited = exitedAt;
        // onExit's action may not have run yet.
        return exited != 0 ? exited : System.currentTimeMillis();
    }

    /**
     * Starts the process of local rank {@code localRank} and forwards its output.
     *
     * @param command the child's command line ({@link #command})
     * @param storePort the rendezvous port the children are told (MASTER_PORT)
     * @param attempt 0 for the first start, then the restart's number (TORCHELASTIC_RESTART_COUNT)
     * @param jobEnv what the launcher adds to every child's environment (the job's secret, its own pid)
     * @param errorFile where the child writes the exception that ends its {@code main}
     * @throws IOException when the java executable cannot be started
     */
    static LaunchedRank start(LaunchOptions o, List<String> command, int localRank, int storePort, int attempt,
            Map<String, String> jobEnv, Path errorFile, PrintStream out, PrintStream err) throws IOException {
        int rank = o.globalRank(localRank);
        ProcessBuilder pb = new ProcessBuilder(AotCache.forRank(command, rank));
        environment(pb.environment(), o, rank, localRank, storePort);
        pb.environment().put("TORCHELASTIC_RESTART_COUNT", Integer.toString(attempt));
        pb.environment().put("TORCHELASTIC_MAX_RESTARTS", Integer.toString(o.maxRestarts()));
        pb.environment().put("TORCHELASTIC_RUN_ID", o.elastic() != null ? o.elastic().runId() : "none");
        pb.environment().putAll(jobEnv);
        pb.environment().put(ProcessExit.ERROR_FILE_ENV, errorFile.toString());
        if (out == System.out && System.console() != null) {
            // The children write to pipes, but what they write ends on this terminal: progress bars may draw.
            pb.environment().put(ProgressBar.TERMINAL_ENV, "1");
        }
        Process p = pb.start();
        // The children read nothing; an open stdin would let one block on the launcher's terminal.
        p.getOutputStream().close();
        // Ranks that run as threads prefix their lines themselves.
        String prefix = o.ranksAsThreads() ? "" : "[rank " + rank + "] ";
        LaunchLogs logs = o.logs();
        Thread o1 = LaunchOutput.forward(p.getInputStream(), logs.toConsole(localRank, LaunchLogs.OUT) ? out : null,
                prefix, logs.file(attempt, localRank, LaunchLogs.OUT), "tensorbus-launch-rank-" + rank + "-out");
        Thread o2 = LaunchOutput.forward(p.getErrorStream(), logs.toConsole(localRank, LaunchLogs.ERR) ? err : null,
                prefix, logs.file(attempt, localRank, LaunchLogs.ERR), "tensorbus-launch-rank-" + rank + "-err");
        return new LaunchedRank(rank, localRank, o.ranksAsThreads() ? o.nprocPerNode() : 1, p, errorFile, o1, o2);
    }

    /** Extra JVM options for every child, split at white space (for example {@code -Xmx2g -XX:+UseG1GC}). */
    static final String JVM_OPTS_ENV = "TENSORBUS_JVM_OPTS";

    /** The children's command line: this JVM's java, the user's class path then this JVM's, the target. */
    static List<String> command(LaunchOptions o, LaunchTarget target) {
        return command(o, target, System.getenv(JVM_OPTS_ENV), Runtime.getRuntime().availableProcessors(),
                System.getenv());
    }

    /** {@link #command(LaunchOptions, LaunchTarget, String, int, Map)} without an AOT cache. */
    static List<String> command(LaunchOptions o, LaunchTarget target, String userOpts, int cores) {
        return command(o, target, userOpts, cores, Map.of());
    }

    /**
     * The children's command line with {@code userOpts} ({@link #JVM_OPTS_ENV}, may be null) on a node with
     * {@code cores} processors, using the AOT cache {@code env} names ({@link AotCache}).
     *
     * @throws IllegalArgumentException when {@code userOpts} sets the class path or a jar, which the launcher
     *     sets itself (--classpath, -jar)
     */
    static List<String> command(LaunchOptions o, LaunchTarget target, String userOpts, int cores,
            Map<String, String> env) {
        List<String> cmd = new ArrayList<>();
        cmd.add(javaExecutable());
        cmd.addAll(JVM_FLAGS);
        cmd.addAll(JIT_FLAGS);
        List<String> user = userOpts == null || userOpts.isBlank() ? List.of()
                : List.of(userOpts.trim().split("\\s+"));
        for (String flag : user) {
            if (List.of("-cp", "-classpath", "--class-path", "-jar").contains(flag)) {
                throw new IllegalArgumentException(JVM_OPTS_ENV + " holds " + flag + ", which the launcher sets: give"
                        + " the class path with --classpath PATH (or CLASSPATH) and a jar with -jar APP.jar");
            }
        }
        cmd.addAll(gcFlags(o.nprocPerNode(), o.nprocPerNode() / o.processesPerNode(), cores, user));
        cmd.addAll(memoryFlags(o.processesPerNode(), totalMemory()));
        cmd.addAll(target.jvmFlags());
        cmd.addAll(user);
        String own = System.getProperty("java.class.path");
        String classPath = target.classPath(own);
        cmd.addAll(AotCache.flags(env, classPath.equals(own), user));
        cmd.add("-cp");
        cmd.add(classPath);
        cmd.add(target.mainClass());
        cmd.addAll(target.programArgs());
        return cmd;
    }

    /** {@link #gcFlags(int, int, int, List)} for one rank per JVM. */
    static List<String> gcFlags(int nprocPerNode, int cores, List<String> userOpts) {
        return gcFlags(nprocPerNode, 1, cores, userOpts);
    }

    /**
     * The serial collector, with a small young generation ({@link #YOUNG_GENERATION_MIB} for each of the JVM's
     * {@code ranksPerJvm} ranks) unless the user sized it, when the node has at most one core per rank and the user
     * chose no collector: the
     * JVM's own choice on a one-core machine. Tensors live off the heap, so the heap stays small and serial
     * pauses short, while G1's concurrent threads would take CPU from the ranks' compute (DDP steps of the
     * tutorial network on 2 cores: 15.3 ms with G1, 12.8 ms with serial, 2026-11-22).
     */
    static List<String> gcFlags(int nprocPerNode, int ranksPerJvm, int cores, List<String> userOpts) {
        boolean userChoseGc = userOpts.stream().anyMatch(f -> f.matches("-XX:[+-]Use\\w*GC"));
        if (userChoseGc || cores > nprocPerNode) {
            return List.of();
        }
        boolean userSizedYoung = userOpts.stream().anyMatch(f -> f.startsWith("-Xmn") || f.contains("NewSize"));
        return userSizedYoung ? List.of("-XX:+UseSerialGC")
                : List.of("-XX:+UseSerialGC", "-Xmn" + YOUNG_GENERATION_MIB * ranksPerJvm + "m");
    }

    /**
     * Each rank's share of the node's memory ({@code totalBytes}, the container's inside one), so that the ranks
     * together stay within it as one JVM alone would: the heaps a quarter of it between them (the JVM's own
     * default for one process, {@code -XX:MaxRAMPercentage=25}), tensor memory the other three quarters
     * ({@code tensorbus.hostMemoryBytes}). And the JVM gives the C library's free memory back to the system
     * every second ({@link #TRIM_NATIVE_HEAP}). The user's {@code TENSORBUS_JVM_OPTS} come later and win
     * ({@code -Xmx} always does).
     */
    static List<String> memoryFlags(int nprocPerNode, long totalBytes) {
        String heapPercent = String.format(Locale.ROOT, "%.3f", 25.0 / nprocPerNode);
        return List.of("-XX:MaxRAMPercentage=" + heapPercent,
                "-Dtensorbus.hostMemoryBytes=" + totalBytes / 4 * 3 / nprocPerNode, TRIM_NATIVE_HEAP);
    }

    /**
     * Has the JVM return the C library's freed memory to the system once a second ({@code malloc_trim}): the
     * compilers' arenas of the warm-up, freed tensor blocks past the cache's bound. The main job's ranks peak
     * 20 MiB lower (233-239 against 253-262 MiB) in the same time, and the collectives soak's growth after its
     * warm-up halves (2026-11-29, AMD EPYC, 2 cores).
     */
    static final String TRIM_NATIVE_HEAP = "-XX:TrimNativeHeapInterval=1000";

    /** The memory of this machine, or of the container the launcher runs in, in bytes. */
    private static long totalMemory() {
        if (ManagementFactory.getOperatingSystemMXBean()
                instanceof OperatingSystemMXBean os) {
            return os.getTotalMemorySize();
        }
        return Runtime.getRuntime().maxMemory() * 4;
    }

    /**
     * The young generation, in MiB, the launcher gives each serial-collector rank: small, so that the dead tensors of
     * a step (small objects on the heap, megabytes off it) are found by a young collection every step or two (0.7 ms)
     * and their storage goes back to the host cache, instead of piling up until {@code System.gc()} (a 30 ms full
     * collection every eighth step of the tutorial network, the other rank waiting for it). Twelve epochs of the
     * main job: 620 young collections and no full one, epochs 0.9-1.1 s, against 43-52 full collections and
     * 1.1-1.3 s with the JVM's default sizing (2026-11-25, AMD EPYC, 2 cores).
     */
    static final int YOUNG_GENERATION_MIB = 8;

    private static void environment(Map<String, String> env, LaunchOptions o, int rank, int localRank, int port) {
        env.put("RANK", Integer.toString(rank));
        env.put("LOCAL_RANK", Integer.toString(localRank));
        env.put("WORLD_SIZE", Integer.toString(o.worldSize()));
        env.put("LOCAL_WORLD_SIZE", Integer.toString(o.nprocPerNode()));
        env.put("GROUP_RANK", Integer.toString(o.nodeRank()));
        env.put("MASTER_ADDR", o.masterAddr());
        env.put("MASTER_PORT", Integer.toString(port));
        env.put(POCL_CACHE_DIR, poclCacheDir(env.get(POCL_CACHE_DIR), rank));
        if (o.localAddr() != null) {
            env.put(AdvertisedHost.LOCAL_ADDR_ENV, o.localAddr());
        }
        if (o.metricsPort(localRank) > 0) {
            env.put(PrometheusEndpoint.PORT_ENV, Integer.toString(o.metricsPort(localRank)));
        }
        if (o.storeHostedByLauncher()) {
            env.put("TENSORBUS_STORE_HOSTED", "1");
        } else {
            // Inherited from an enclosing launch, it would send rank 0 to a store nobody hosts.
            env.remove("TENSORBUS_STORE_HOSTED");
        }
    }

    /** pocl's kernel cache directory, which its processes must not share (it crashes when they do). */
    static final String POCL_CACHE_DIR = "POCL_CACHE_DIR";

    /**
     * The kernel cache of rank {@code rank} for pocl, the CPU OpenCL driver: a folder of its own under the one the
     * user chose, or under the temporary directory.
     */
    static String poclCacheDir(String userDir, int rank) {
        String base = userDir != null && !userDir.isBlank() ? userDir
                : Path.of(System.getProperty("java.io.tmpdir"), "tensorbus-pocl-" + ProcessHandle.current().pid())
                        .toString();
        return Path.of(base, "rank" + rank).toString();
    }

    private static String javaExecutable() {
        return ProcessHandle.current().info().command()
                .orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    }

    /** The global rank (the first, for ranks that run as threads). */
    int rank() {
        return rank;
    }

    /** Who this JVM is in messages: {@code rank 3}, or {@code ranks 2 to 3} when they run as its threads. */
    String name() {
        return count == 1 ? "rank " + rank : "ranks " + rank + " to " + (rank + count - 1);
    }

    /** The rank on this node. */
    int localRank() {
        return localRank;
    }

    /** The child process. */
    Process process() {
        return process;
    }

    /** Asks the process and everything it started to stop (SIGTERM: shutdown hooks run). */
    void terminate() {
        process.descendants().forEach(ProcessHandle::destroy);
        process.destroy();
    }

    /** Kills the process and everything it started (SIGKILL). */
    void kill() {
        process.descendants().forEach(ProcessHandle::destroyForcibly);
        process.destroyForcibly();
    }

    /** Waits up to {@code millis} for the output threads to forward the last lines. */
    void drainOutput(long millis) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
        for (Thread t : List.of(stdout, stderr)) {
            long left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
            if (left > 0) {
                t.join(left);
            }
        }
    }
}
