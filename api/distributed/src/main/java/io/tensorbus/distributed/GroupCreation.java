package io.tensorbus.distributed;

import io.tensorbus.spi.BackendProvider;
import io.vertx.core.Future;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Making groups out of a group, behind {@link Distributed#newGroup}, {@link Distributed#newSubgroups},
 * {@link Distributed#newSubgroupsByEnumeration} and {@link Distributed#splitGroup}: the checks of the ranks and
 * the order every member must follow. The group itself only builds a subgroup's handle.
 */
final class GroupCreation {
    private GroupCreation() {
    }

    static Future<ProcessGroup> newGroup(ProcessGroup parent, int[] ranks, Duration timeout, String backend) {
        if (parent.outside("newGroup")) {
            return Future.failedFuture(parent.notMember("newGroup"));
        }
        int[] members = checkSubgroup(parent, ranks);
        if (timeout != null && (timeout.isNegative() || timeout.isZero())) {
            throw new IllegalArgumentException("timeout=" + timeout + " must be positive");
        }
        Duration limit = timeout == null ? parent.timeout() : timeout;
        BackendProvider provider = BackendProvider.named(backend == null ? parent.backendName() : backend);
        return parent.subgroup(members, limit, provider);
    }

    static Future<Subgroups> newSubgroups(ProcessGroup parent, int groupSize) {
        if (parent.outside("newSubgroups")) {
            return Future.failedFuture(parent.notMember("newSubgroups"));
        }
        int size = parent.size();
        if (groupSize < 1 || size % groupSize != 0) {
            throw new IllegalArgumentException("groupSize=" + groupSize + " must be at least 1 and divide the group's"
                    + " size, " + size);
        }
        int[] all = parent.ranks();
        List<int[]> lists = new ArrayList<>();
        for (int start = 0; start < size; start += groupSize) {
            lists.add(Arrays.copyOfRange(all, start, start + groupSize));
        }
        return newSubgroupsByEnumeration(parent, lists);
    }

    static Future<Subgroups> newSubgroupsByEnumeration(ProcessGroup parent, List<int[]> ranksPerSubgroup) {
        if (parent.outside("newSubgroupsByEnumeration")) {
            return Future.failedFuture(parent.notMember("newSubgroupsByEnumeration"));
        }
        if (ranksPerSubgroup == null || ranksPerSubgroup.isEmpty()) {
            throw new IllegalArgumentException("ranksPerSubgroup must hold at least one list of ranks");
        }
        Map<Integer, Integer> seenIn = new HashMap<>();
        for (int i = 0; i < ranksPerSubgroup.size(); i++) {
            for (int r : checkSubgroup(parent, ranksPerSubgroup.get(i))) {
                Integer before = seenIn.put(r, i);
                if (before != null) {
                    throw new IllegalArgumentException("rank " + r + " is in subgroup " + before + " and in subgroup "
                            + i + "; a rank may be in one subgroup only");
                }
            }
        }
        List<Future<ProcessGroup>> created = new ArrayList<>();
        for (int[] ranks : ranksPerSubgroup) {
            created.add(newGroup(parent, ranks, null, null));
        }
        return Future.all(created).map(all -> {
            List<ProcessGroup> groups = created.stream().map(Future::result).toList();
            return new Subgroups(groups.stream().filter(ProcessGroup::isMember).findFirst(), groups);
        });
    }

    static Future<Optional<ProcessGroup>> splitGroup(ProcessGroup parent, List<int[]> splitRanks) {
        if (parent.outside("splitGroup")) {
            return Future.failedFuture(parent.notMember("splitGroup"));
        }
        if (splitRanks == null) {
            throw new NullPointerException("splitRanks must not be null");
        }
        List<int[]> global = new ArrayList<>();
        for (int[] ranks : splitRanks) {
            if (ranks == null) {
                throw new NullPointerException("splitRanks must not hold null");
            }
            int[] g = new int[ranks.length];
            for (int i = 0; i < ranks.length; i++) {
                if (ranks[i] < 0 || ranks[i] >= parent.size()) {
                    throw new IllegalArgumentException("splitRanks rank=" + ranks[i] + " is not a rank of this group"
                            + " (size " + parent.size() + ")");
                }
                g[i] = parent.globalRank(ranks[i]);
            }
            global.add(g);
        }
        return newSubgroupsByEnumeration(parent, global).map(Subgroups::current);
    }

    /** {@code ranks} sorted, each a member of {@code parent} once. */
    private static int[] checkSubgroup(ProcessGroup parent, int[] ranks) {
        if (ranks == null || ranks.length == 0) {
            throw new IllegalArgumentException("newGroup needs at least one rank");
        }
        int[] sorted = ranks.clone();
        Arrays.sort(sorted);
        for (int i = 0; i < sorted.length; i++) {
            if (i > 0 && sorted[i] == sorted[i - 1]) {
                throw new IllegalArgumentException("rank " + sorted[i] + " appears twice in " + Arrays.toString(ranks));
            }
            if (parent.groupRank(sorted[i]) < 0) {
                throw new IllegalArgumentException("rank " + sorted[i] + " is not a member of group '" + parent.name()
                        + "' (global ranks " + Arrays.toString(parent.ranks()) + ")");
            }
        }
        return sorted;
    }
}
