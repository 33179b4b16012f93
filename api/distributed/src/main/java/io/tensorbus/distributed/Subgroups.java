package io.tensorbus.distributed;

import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * What {@link ProcessGroup#newSubgroups} and {@link ProcessGroup#newSubgroupsByEnumeration} create (PyTorch's
 * {@code (cur_subgroup, subgroups)} pair).
 *
 * @param current the subgroup this process is a member of; empty when it is in none
 * @param all     every subgroup in creation order (handles whose {@link ProcessGroup#isMember()} is false where
 *                this process is not a member)
 */
public record Subgroups(Optional<ProcessGroup> current, List<ProcessGroup> all) {
    /**
     * @throws NullPointerException when either is null
     */
    public Subgroups {
        Objects.requireNonNull(current, "current must not be null (use Optional.empty())");
        all = List.copyOf(all);
    }
}
