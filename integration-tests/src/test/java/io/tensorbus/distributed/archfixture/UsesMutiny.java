package io.tensorbus.distributed.archfixture;

import io.smallrye.mutiny.Uni;

/** Distributed code that needs Mutiny: {@code DISTRIBUTED_NEEDS_NO_CLUSTERING} must report it. */
public final class UsesMutiny {
    private UsesMutiny() {
    }

    /** A Mutiny type in a distributed signature. */
    public static Uni<Integer> one() {
        return Uni.createFrom().item(1);
    }
}
