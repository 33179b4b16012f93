package io.tensorbus.distributed;

/**
 * Which group {@link Distributed#defaultGroup()} means: the group a {@link Distributed#spawn} rank runs on for
 * its thread, else this process's first group from {@link Distributed#initProcessGroup} that is not yet
 * destroyed (PyTorch has one default group per process; ranks as threads each need their own).
 */
final class DefaultGroups {
    private static final ThreadLocal<ProcessGroup> OF_THREAD = new ThreadLocal<>();
    private static final Object LOCK = new Object();
    private static ProcessGroup ofProcess;

    private DefaultGroups() {
    }

    /** {@code group} was initialised: it becomes the process's default when there is none. */
    static void initialised(ProcessGroup group) {
        synchronized (LOCK) {
            if (ofProcess == null) {
                ofProcess = group;
            }
        }
    }

    /** {@code group} was destroyed: it is nobody's default any more. */
    static void destroyed(ProcessGroup group) {
        synchronized (LOCK) {
            if (ofProcess == group) {
                ofProcess = null;
            }
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
        synchronized (LOCK) {
            return ofProcess;
        }
    }
}
