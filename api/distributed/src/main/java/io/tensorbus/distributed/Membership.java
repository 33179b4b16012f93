package io.tensorbus.distributed;

import java.util.Arrays;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Who is in a {@link ProcessGroup} and where this process stands: the members' global ranks in group-rank order
 * (c10d's {@code pg_group_ranks}), translation between global and group ranks, and the checks of ranks that
 * arguments name, with messages that name the group's members.
 */
final class Membership {
    private static final System.Logger LOG = System.getLogger(ProcessGroup.class.getName());

    private final String group;
    private final int[] globalRanks;
    private final int globalRank;
    /** Whether a non-member's call was warned about already. */
    private final AtomicBoolean warnedOutside = new AtomicBoolean();

    Membership(String group, int[] globalRanks, int globalRank) {
        this.group = group;
        this.globalRanks = globalRanks.clone();
        this.globalRank = globalRank;
    }

    int size() {
        return globalRanks.length;
    }

    int[] ranks() {
        return globalRanks.clone();
    }

    /** This process's global rank (a member's or not). */
    int self() {
        return globalRank;
    }

    /** The global rank of a group rank already checked. */
    int global(int groupRank) {
        return globalRanks[groupRank];
    }

    /** The group rank of global rank {@code global}, or -1 when that process is not a member. */
    int groupRank(int global) {
        for (int i = 0; i < globalRanks.length; i++) {
            if (globalRanks[i] == global) {
                return i;
            }
        }
        return -1;
    }

    /**
     * The group rank of global rank {@code global}.
     *
     * @throws IllegalArgumentException when that process is not a member, naming the members
     */
    GroupRank toGroup(int global, String what) {
        int r = groupRank(global);
        if (r < 0) {
            throw new IllegalArgumentException(what + "=" + global + " is not a member of this group (global ranks "
                    + Arrays.toString(globalRanks) + "); " + what + " is a global rank, GroupRank.of(r) names a rank"
                    + " of the group");
        }
        return GroupRank.of(r);
    }

    void checkRank(int r, String what) {
        if (r < 0 || r >= size()) {
            throw new IllegalArgumentException(what + "=" + r + " is not a rank of this group (size " + size() + ")");
        }
    }

    void checkRank(GroupRank r, String what) {
        Objects.requireNonNull(r, what + " must not be null");
        if (r.rank() >= size()) {
            throw new IllegalArgumentException("group " + what + "=" + r.rank() + " is not a rank of this group (size "
                    + size() + ")");
        }
    }

    /** Checks a point-to-point peer: a rank of the group other than {@code own}, this process's group rank. */
    void checkPeer(GroupRank r, String what, int own) {
        checkRank(r, what);
        if (r.rank() == own) {
            throw new IllegalArgumentException(what + "=" + globalRanks[r.rank()] + " is this process's own rank;"
                    + " point-to-point needs another rank");
        }
    }

    /** Logs, the first time only, that this non-member ran {@code op}, which does nothing here. */
    void warnOutside(String op) {
        if (warnedOutside.compareAndSet(false, true)) {
            LOG.log(System.Logger.Level.WARNING, "global rank {0} ran {1} on group ''{2}'' (ranks {3}), which it is"
                    + " not a member of: it does nothing there (warned once per group)", globalRank, op, group,
                    Arrays.toString(globalRanks));
        }
    }

    /** The failure of an operation that cannot run on a process outside the group. */
    IllegalStateException notMember(String op) {
        return new IllegalStateException("global rank " + globalRank + " is not a member of group '" + group
                + "' (ranks " + Arrays.toString(globalRanks) + "): " + op + " cannot run on it");
    }

    @Override
    public String toString() {
        return Arrays.toString(globalRanks);
    }
}
