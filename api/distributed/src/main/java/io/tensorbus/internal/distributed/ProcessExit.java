package io.tensorbus.internal.distributed;

import io.tensorbus.c10d.PeerLostException;
import io.vertx.core.Future;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * What happens to this process's communication when its program ends, as in PyTorch, where a script exits
 * when its main ends whether or not it destroyed its group. tensorbus's own threads are daemons
 * ({@code Distributed.newVertx}), so they never keep a JVM alive; what a program left open (a default process
 * group, an RPC agent) is closed by a shutdown hook with a one-line warning, which tells the peers (GOODBYE)
 * instead of leaving them to notice a dead socket. The hook waits at most {@link #CLOSE_SECONDS} seconds.
 *
 * <p>Under {@code tensorbus launch} two more things hold, as under torchrun: a rank ends when its launcher is
 * gone ({@value #LAUNCHER_PID_ENV}: a launcher killed on one node ends its ranks, so the job ends on every
 * node), and an exception escaping {@code main} is written to the file {@value #ERROR_FILE_ENV} names
 * (torchrun's {@code TORCHELASTIC_ERROR_FILE}), so the launcher can say why the rank failed, for example
 * which peer was lost.
 */
public final class ProcessExit {
    /** The launcher's process id, set by {@code tensorbus launch} for its ranks. */
    public static final String LAUNCHER_PID_ENV = "TENSORBUS_LAUNCHER_PID";

    /** The file a rank writes the exception that ended its {@code main} to, set by {@code tensorbus launch}. */
    public static final String ERROR_FILE_ENV = "TENSORBUS_ERROR_FILE";

    /**
     * The second line of the error file when the exception that ended {@code main} came from losing a peer
     * ({@code PeerLostException} in its causes): the rank failed because another did, so the launcher looks for
     * the cause elsewhere first, whichever rank's failure it saw first.
     */
    public static final String LOST_A_PEER = "lost a peer";

    /** The exit status of a rank whose launcher is gone. */
    public static final int LAUNCHER_GONE_EXIT = 1;

    /** How long the shutdown hook waits for what it closes, in seconds. */
    static final long CLOSE_SECONDS = 1;

    /** How often the watcher of {@link #closeWhenProgramEnds} looks at the threads, in milliseconds. */
    static final long WATCH_MILLIS = 200;

    private static final List<Registration> OPEN = new CopyOnWriteArrayList<>();
    private static boolean installed;
    private static boolean watching;

    private ProcessExit() {
    }

    /** Something left open that the shutdown hook closes; {@link #done()} once the program closed it itself. */
    public static final class Registration {
        private final String what;
        private final Supplier<Future<?>> close;
        /** The non-daemon threads it runs on, which would keep the JVM alive; null when it has none. */
        private final Predicate<Thread> ownThreads;

        private Registration(String what, Supplier<Future<?>> close, Predicate<Thread> ownThreads) {
            this.what = what;
            this.close = close;
            this.ownThreads = ownThreads;
        }

        /** The program closed it: nothing to do at exit. */
        public void done() {
            OPEN.remove(this);
        }
    }

    /**
     * Has the shutdown hook close {@code what} (for example {@code "process group 'default' (rank 1 of 2)"})
     * with {@code close} unless {@link Registration#done()} is called first.
     */
    public static Registration closeAtExit(String what, Supplier<Future<?>> close) {
        install();
        Registration r = new Registration(what, close, null);
        OPEN.add(r);
        return r;
    }

    /**
     * For what runs on non-daemon threads tensorbus cannot make daemons (a Hazelcast member's): closes
     * {@code what}, with the same warning, once every other non-daemon thread of the program has ended (its
     * {@code main} returned and nothing else of its own runs), so that those threads end and the JVM with
     * them. A watcher looks every {@value #WATCH_MILLIS} ms.
     *
     * @param ownThreads recognises the threads of {@code what}
     */
    public static Registration closeWhenProgramEnds(String what, Supplier<Future<?>> close,
            Predicate<Thread> ownThreads) {
        install();
        Registration r = new Registration(what, close, ownThreads);
        OPEN.add(r);
        startWatcher();
        return r;
    }

    private static synchronized void startWatcher() {
        if (watching) {
            return;
        }
        watching = true;
        Thread.ofPlatform().daemon().name("tensorbus-exit-watch").start(() -> {
            while (true) {
                try {
                    Thread.sleep(WATCH_MILLIS);
                } catch (InterruptedException e) {
                    return;
                }
                if (OPEN.stream().anyMatch(r -> r.ownThreads != null) && !programRuns()) {
                    closeLeftOpen();
                }
            }
        });
    }

    /** True while a non-daemon thread runs that is neither the JVM's exit thread nor one of a registration. */
    private static boolean programRuns() {
        List<Predicate<Thread>> owned = OPEN.stream().map(r -> r.ownThreads).filter(p -> p != null).toList();
        return Thread.getAllStackTraces().keySet().stream().anyMatch(t -> t.isAlive() && !t.isDaemon()
                && !t.getName().equals("DestroyJavaVM") && owned.stream().noneMatch(p -> p.test(t)));
    }

    /**
     * Installs the shutdown hook, the launcher watch and the error file once per process; idempotent. Every
     * Vert.x that tensorbus creates and every registration installs it.
     */
    public static synchronized void install() {
        if (installed) {
            return;
        }
        installed = true;
        Runtime.getRuntime().addShutdownHook(new Thread(ProcessExit::closeLeftOpen, "tensorbus-exit"));
        Map<String, String> env = System.getenv();
        watchLauncher(env.get(LAUNCHER_PID_ENV));
        recordMainFailure(env.get(ERROR_FILE_ENV));
    }

    private static synchronized void closeLeftOpen() {
        List<Registration> open = new ArrayList<>(OPEN);
        if (open.isEmpty()) {
            return;
        }
        OPEN.removeAll(open);
        Collections.reverse(open);
        System.err.println("tensorbus: warning: " + String.join(", ", open.stream().map(r -> r.what).toList())
                + (open.size() == 1 ? " was" : " were") + " left open at exit; closing "
                + (open.size() == 1 ? "it" : "them") + " now (destroy groups and shut RPC down before the"
                + " program ends)");
        List<CompletableFuture<?>> closing = new ArrayList<>();
        for (Registration r : open) {
            try {
                closing.add(r.close.get().toCompletionStage().toCompletableFuture());
            } catch (RuntimeException e) {
                // Closing one must not keep the others open.
            }
        }
        try {
            CompletableFuture.allOf(closing.toArray(CompletableFuture[]::new)).get(CLOSE_SECONDS, TimeUnit.SECONDS);
        } catch (Exception e) {
            // Exiting anyway: the peers notice the closed sockets.
        }
    }

    private static void watchLauncher(String pid) {
        if (pid == null || pid.isBlank()) {
            return;
        }
        Optional<ProcessHandle> launcher;
        try {
            launcher = ProcessHandle.of(Long.parseLong(pid.trim()));
        } catch (NumberFormatException e) {
            return;
        }
        if (launcher.isEmpty()) {
            launcherGone(pid);
            return;
        }
        launcher.get().onExit().thenRun(() -> launcherGone(pid));
    }

    private static void launcherGone(String pid) {
        System.err.println("tensorbus: the launcher of this rank (pid " + pid.trim() + ") is gone; ending the rank");
        // exit, not halt: the shutdown hook still tells the peers this rank leaves.
        Runtime.getRuntime().exit(LAUNCHER_GONE_EXIT);
    }

    private static void recordMainFailure(String file) {
        if (file == null || file.isBlank() || Thread.getDefaultUncaughtExceptionHandler() != null) {
            return;
        }
        Path path = Path.of(file.trim());
        Thread.setDefaultUncaughtExceptionHandler((thread, e) -> {
            if (thread.getName().equals("main")) {
                try {
                    Files.writeString(path, errorText(e), StandardCharsets.UTF_8);
                } catch (IOException ignored) {
                    // The launcher then reports the exit status alone.
                }
            }
            // What the JVM prints without a handler (ThreadGroup.uncaughtException).
            System.err.print("Exception in thread \"" + thread.getName() + "\" ");
            e.printStackTrace(System.err);
        });
    }

    /** The error file's text: the exception's first line, then {@link #LOST_A_PEER} where that was the cause. */
    static String errorText(Throwable e) {
        String text = String.valueOf(e).lines().findFirst().orElse("") + "\n";
        Throwable t = e;
        // A bounded walk: a cause chain may loop.
        for (int depth = 0; t != null && depth < 32; depth++, t = t.getCause()) {
            if (t instanceof PeerLostException) {
                return text + LOST_A_PEER + "\n";
            }
        }
        return text;
    }
}
