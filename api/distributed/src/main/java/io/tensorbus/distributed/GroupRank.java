package io.tensorbus.distributed;

/**
 * A rank of a group rather than a global rank, as PyTorch's {@code group_src}, {@code group_dst} and
 * {@code group_peer} arguments: {@code group.broadcast(t, GroupRank.of(0))} broadcasts from the group's first
 * member, while {@code group.broadcast(t, 0)} broadcasts from global rank 0, which must be a member.
 *
 * @param rank a rank of the group, from 0 to its size - 1
 */
public record GroupRank(int rank) {
    /**
     * @throws IllegalArgumentException when {@code rank} is negative
     */
    public GroupRank {
        if (rank < 0) {
            throw new IllegalArgumentException("a group rank must be >= 0, got " + rank);
        }
    }

    /** Group rank {@code rank}. */
    public static GroupRank of(int rank) {
        return new GroupRank(rank);
    }
}
