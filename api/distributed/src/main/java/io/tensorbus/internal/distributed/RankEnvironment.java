package io.tensorbus.internal.distributed;

import java.util.Map;
import java.util.Objects;
import java.util.concurrent.Callable;

/**
 * The environment variables of a rank that runs as a thread of a JVM holding several ranks ({@code tensorbus launch
 * --ranks-as-threads}): they overlay the process's for that thread and the threads it starts (its Vert.x, its
 * workers), so that {@code env://}, {@code LOCAL_RANK} and the like read the rank's own values. Elsewhere the
 * process's environment is read. What {@link io.tensorbus.distributed.Distributed#environment()} returns.
 */
public final class RankEnvironment {
    private static final InheritableThreadLocal<Map<String, String>> CURRENT = new InheritableThreadLocal<>();
    /** The scope of the threads that run no rank of their own. */
    private static final Object PROCESS = new Object();

    private RankEnvironment() {
    }

    /** The calling thread's rank environment, else the process's. */
    public static Map<String, String> current() {
        Map<String, String> env = CURRENT.get();
        return env != null ? env : System.getenv();
    }

    /**
     * A key for what belongs to the calling thread's rank rather than to the process (such as the RPC agent a rank
     * started first): the rank's environment object, shared by the threads it started, or {@code PROCESS} elsewhere.
     * Compare keys by identity.
     */
    public static Object scope() {
        Map<String, String> env = CURRENT.get();
        return env != null ? env : PROCESS;
    }

    /**
     * Runs {@code body} on the calling thread with {@code env} as its environment (and that of the threads it starts),
     * then restores the one it had.
     *
     * @throws Exception what {@code body} throws
     */
    public static <T> T call(Map<String, String> env, Callable<T> body) throws Exception {
        Map<String, String> copy = Map.copyOf(Objects.requireNonNull(env, "env"));
        Map<String, String> before = CURRENT.get();
        CURRENT.set(copy);
        try {
            return body.call();
        } finally {
            if (before == null) {
                CURRENT.remove();
            } else {
                CURRENT.set(before);
            }
        }
    }
}
