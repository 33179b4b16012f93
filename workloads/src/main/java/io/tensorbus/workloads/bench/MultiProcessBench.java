package io.tensorbus.workloads.bench;

import io.tensorbus.Device;
import io.tensorbus.distributed.Distributed;
import io.tensorbus.distributed.InitOptions;
import io.tensorbus.distributed.ProcessGroup;
import io.tensorbus.tensor.Threads;
import io.tensorbus.workloads.cli.LaunchOptions;
import io.tensorbus.workloads.cli.Launcher;
import io.tensorbus.workloads.ddp.DdpConfig;
import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.function.Consumer;

/**
 * What the multi-process suites ({@code collectives}, {@code p2p}) share. The driver side runs a worker main
 * class in separate JVMs through {@link Launcher} (one process per rank, as the PyTorch anchors'
 * {@code mp.spawn}) and turns rank 0's measurement lines back into {@link Measurement}s; the worker side
 * joins the job through {@code env://} with one compute thread ({@code torch.set_num_threads(1)}) and times
 * operations as the anchors do.
 */
final class MultiProcessBench {
    private static final String RANK0 = "[rank 0] ";

    private MultiProcessBench() {
    }

    // ---- driver ---------------------------------------------------------------------------------------

    /**
     * Starts {@code world} JVMs of {@code workerClass} with {@code workerArgs}, hands every line of rank 0 that
     * starts with {@code suite + " "} to {@code sink} as a measurement, and copies any other output to
     * {@code err}.
     *
     * @return the launcher's exit status: 0 when every rank succeeded
     */
    static int launch(String suite, Class<?> workerClass, int world, List<String> workerArgs,
                      Consumer<Measurement> sink, PrintStream err) {
        return launch(suite, workerClass, world, false, workerArgs, sink, err);
    }

    /**
     * {@link #launch(String, Class, int, List, Consumer, PrintStream)}, with {@code ranksAsThreads} the ranks as
     * threads of one JVM ({@code tensorbus launch --ranks-as-threads}).
     */
    static int launch(String suite, Class<?> workerClass, int world, boolean ranksAsThreads, List<String> workerArgs,
                      Consumer<Measurement> sink, PrintStream err) {
        List<String> target = new ArrayList<>(List.of(workerClass.getName()));
        target.addAll(workerArgs);
        List<String> args = LaunchOptions.jobArgs(world, ranksAsThreads, target);
        PrintStream lines = new PrintStream(new LineSplitter(line -> {
            if (line.startsWith(RANK0 + suite + " ")) {
                try {
                    sink.accept(parse(line.substring(RANK0.length())));
                } catch (IllegalArgumentException e) {
                    // Said, not lost: the suite then reports fewer lines than its caller expects.
                    err.println("tensorbus bench: " + e.getMessage());
                }
            } else {
                err.println(line);
            }
        }), true, StandardCharsets.UTF_8);
        return Launcher.run(args, lines, err);
    }

    /**
     * Reads a measurement line back: {@code SUITE NAME key=value ...}; a value with a decimal point keeps
     * its number of decimals, so that {@code parse(m.line()).line()} equals {@code m.line()}.
     *
     * @throws IllegalArgumentException when the line is not in that format
     */
    /** The keys whose values are words, not numbers. */
    private static final Set<String> WORD_KEYS = Set.of("backend", "device", "schedule", "ranks");

    static Measurement parse(String line) {
        String[] parts = line.trim().split(" +");
        if (parts.length < 2) {
            throw new IllegalArgumentException("not a measurement line (SUITE NAME key=value ...): '" + line + "'");
        }
        Measurement m = new Measurement(parts[0], parts[1]);
        for (int i = 2; i < parts.length; i++) {
            int eq = parts[i].indexOf('=');
            if (eq <= 0 || eq == parts[i].length() - 1) {
                throw new IllegalArgumentException("'" + parts[i] + "' is not key=value in '" + line + "'");
            }
            String key = parts[i].substring(0, eq);
            String value = parts[i].substring(eq + 1);
            if (WORD_KEYS.contains(key)) {
                m.with(key, value);
                continue;
            }
            try {
                int dot = value.indexOf('.');
                if (dot < 0) {
                    m.with(key, Long.parseLong(value));
                } else {
                    m.with(key, Double.parseDouble(value), value.length() - dot - 1);
                }
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("the value of " + key + " is not a number in '" + line + "'");
            }
        }
        return m;
    }

    /** Hands each complete line written to it (UTF-8, without its end) to a consumer. */
    private static final class LineSplitter extends OutputStream {
        private final Consumer<String> consumer;
        private final ByteArrayOutputStream current = new ByteArrayOutputStream();

        LineSplitter(Consumer<String> consumer) {
            this.consumer = consumer;
        }

        @Override
        public synchronized void write(int b) {
            if (b == '\n') {
                String line = current.toString(StandardCharsets.UTF_8);
                current.reset();
                consumer.accept(line.endsWith("\r") ? line.substring(0, line.length() - 1) : line);
            } else {
                current.write(b);
            }
        }

        @Override
        public synchronized void write(byte[] b, int off, int len) {
            for (int i = off; i < off + len; i++) {
                write(b[i]);
            }
        }

        @Override
        public synchronized void close() {
            if (current.size() > 0) {
                write('\n');
            }
        }
    }

    // ---- worker ---------------------------------------------------------------------------------------

    /**
     * How long any one operation of a bench may take before the group fails (and the rank exits with an
     * error): far above the slowest measured call, far below the 30-minute default that would let a stuck
     * run hang a benchmark script for half an hour.
     */
    static final Duration OPERATION_TIMEOUT = Duration.ofMinutes(2);
    /** How long the JIT compilers must have compiled nothing for {@link #awaitQuietCompiler()}, in ms. */
    static final long QUIET_COMPILER_MILLIS = 300;
    /** The longest {@link #awaitQuietCompiler()} waits, in ms. */
    static final long QUIET_COMPILER_DEADLINE_MILLIS = 10_000;

    /** One compute thread, as the anchors' {@code torch.set_num_threads(1)}, then {@code env://} set-up. */
    static ProcessGroup join() {
        return join("tcp");
    }

    /** {@link #join()} on the backend called {@code backend}. */
    static ProcessGroup join(String backend) {
        Threads.set(1);
        return Distributed.initProcessGroup(InitOptions.builder().backend(backend).timeout(OPERATION_TIMEOUT).build())
                .await();
    }

    /** {@link #join()} for training on {@code device}: its backend (opencl, nccl), bound to it. */
    static ProcessGroup join(Device device) {
        if (device.isCpu()) {
            return join();
        }
        Threads.set(1);
        return Distributed.initProcessGroup(InitOptions.builder().backend(DdpConfig.backendFor(device))
                .deviceId(device).timeout(OPERATION_TIMEOUT).build()).await();
    }

    /**
     * Waits until this JVM's JIT compilers have compiled nothing for {@link #QUIET_COMPILER_MILLIS}, or
     * {@link #QUIET_COMPILER_DEADLINE_MILLIS} at most: a warm-up's calls queue compilations that the compiler threads
     * work through for seconds afterwards, and on a machine with one core per rank they take a rank's core in the
     * middle of a timed call. Returns at once where the JVM does not report its compilation time.
     */
    static void awaitQuietCompiler() {
        CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
        if (jit == null || !jit.isCompilationTimeMonitoringSupported()) {
            return;
        }
        long deadline = System.nanoTime() + QUIET_COMPILER_DEADLINE_MILLIS * 1_000_000L;
        long last = jit.getTotalCompilationTime();
        long quietSince = System.nanoTime();
        while (System.nanoTime() - quietSince < QUIET_COMPILER_MILLIS * 1_000_000L && System.nanoTime() < deadline) {
            sleepMillis(50);
            long now = jit.getTotalCompilationTime();
            if (now != last) {
                last = now;
                quietSince = System.nanoTime();
            }
        }
    }

    private static void sleepMillis(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for the JIT compilers to finish", e);
        }
    }

    /** The group's ranks meet once more, so that none closes its connections while another still reads. */
    static void finish(ProcessGroup pg) {
        pg.barrier().await();
    }

    /** Prints a measurement line on rank 0's stdout, where the driver reads it. */
    static void report(Measurement m) {
        System.out.println(m.line());
        System.out.flush();
    }

    /**
     * The anchors' timing: {@code warmups} untimed runs of {@code op}, then {@code iters} timed ones, each
     * after {@code before} (a barrier, or nothing), which is not timed; the median in seconds.
     */
    static double medianSeconds(int warmups, int iters, Runnable before, Runnable op) {
        for (int i = 0; i < warmups; i++) {
            op.run();
        }
        double[] times = new double[iters];
        for (int i = 0; i < iters; i++) {
            before.run();
            long t0 = System.nanoTime();
            op.run();
            times[i] = (System.nanoTime() - t0) / 1e9;
        }
        return median(times);
    }

    /** The median, as Python's {@code statistics.median}: the mean of the middle two for an even count. */
    static double median(double[] values) {
        if (values.length == 0) {
            throw new IllegalArgumentException("no values");
        }
        double[] s = values.clone();
        Arrays.sort(s);
        int n = s.length;
        return n % 2 == 1 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
    }
}
