package io.tensorbus.distributed;

import io.tensorbus.internal.distributed.RankDefault;

/**
 * Which group {@link Distributed#defaultGroup()} means: the group a {@link Distributed#spawn} rank runs on for
 * its thread, else the first group from {@link Distributed#initProcessGroup} that is not yet destroyed, made in
 * this process or, where ranks run as threads of one JVM ({@code tensorbus launch --ranks-as-threads}), by this
 * rank (PyTorch has one default group per process; ranks as threads each need their own).
 */
final class DefaultGroups {
    private static final ThreadLocal<ProcessGroup> OF_THREAD = new ThreadLocal<>();
    private static final RankDefault<ProcessGroup> OF_SCOPE = new RankDefault<>();

    private DefaultGroups() {
    }

    /** {@code group} was initialised in {@code scope}: it becomes the scope's default when it has none. */
    static void initialised(Object scope, ProcessGroup group) {
        OF_SCOPE.offer(scope, group);
    }

    /** {@code group} was destroyed: it is nobody's default any more. */
    static void destroyed(ProcessGroup group) {
        OF_SCOPE.withdraw(group);
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
        return OF_SCOPE.get();
    }
}
