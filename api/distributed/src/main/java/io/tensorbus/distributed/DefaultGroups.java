package io.tensorbus.distributed;

import io.tensorbus.internal.distributed.RankEnvironment;
import java.util.IdentityHashMap;
import java.util.Map;

/**
 * Which group {@link Distributed#defaultGroup()} means: the group a {@link Distributed#spawn} rank runs on for
 * its thread, else the first group from {@link Distributed#initProcessGroup} that is not yet destroyed, made in
 * this process or, where ranks run as threads of one JVM ({@code tensorbus launch --ranks-as-threads}), by this
 * rank (PyTorch has one default group per process; ranks as threads each need their own).
 */
final class DefaultGroups {
    private static final ThreadLocal<ProcessGroup> OF_THREAD = new ThreadLocal<>();
    /** The default group of each {@link RankEnvironment#scope() rank scope}; guarded by itself. */
    private static final Map<Object, ProcessGroup> OF_SCOPE = new IdentityHashMap<>();

    private DefaultGroups() {
    }

    /** {@code group} was initialised in {@code scope}: it becomes the scope's default when it has none. */
    static void initialised(Object scope, ProcessGroup group) {
        synchronized (OF_SCOPE) {
            OF_SCOPE.putIfAbsent(scope, group);
        }
    }

    /** {@code group} was destroyed: it is nobody's default any more. */
    static void destroyed(ProcessGroup group) {
        synchronized (OF_SCOPE) {
            OF_SCOPE.values().removeIf(g -> g == group);
        }
        if (OF_THREAD.get() == group) {
            OF_THREAD.remove();
        }
    }

    /** Runs {@code body} with {@code group} as the calling thread's default group. */
    static void runAs(ProcessGroup group, Distributed.RankMain body) throws Exception {
        OF_THREAD.set(group);
        try {
            body.run(group);
        } finally {
            OF_THREAD.remove();
        }
    }

    /** The calling thread's default group, or null. */
    static ProcessGroup current() {
        ProcessGroup mine = OF_THREAD.get();
        if (mine != null) {
            return mine;
        }
        synchronized (OF_SCOPE) {
            return OF_SCOPE.get(RankEnvironment.scope());
        }
    }
}
