package io.tensorbus.distributed.rpc;

import io.vertx.core.Promise;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The owner's record of one value (PyTorch's {@code OwnerRRef}): the value (or its pending computation),
 * the forks of users alive, the forks already deleted (so that a late or repeated FORK or ACCEPT cannot
 * bring one back: messages may arrive in any order and more than once), and the open RRef handles on the
 * owner itself. The value goes when it was created, no user is left and no handle is open. Guarded by its
 * {@link RRefContext}'s lock.
 */
final class OwnerRRef {
    private final RRefId id;
    private final Promise<Object> value = Promise.promise();
    private final Set<ForkId> forks = new HashSet<>();
    private final Set<ForkId> gone = new HashSet<>();
    private boolean created;
    private int handles;

    OwnerRRef(RRefId id) {
        this.id = id;
    }

    RRefId id() {
        return id;
    }

    Promise<Object> value() {
        return value;
    }

    /** Marks the value created (by {@code remote} or {@code RRef.of}); false when it already was. */
    boolean create() {
        boolean first = !created;
        created = true;
        return first;
    }

    /** Adds a user's fork (FORK or ACCEPT); false when it is already there or was deleted. */
    boolean addFork(ForkId fork) {
        return !gone.contains(fork) && forks.add(fork);
    }

    /** Deletes a user's fork, for good; false when it was deleted before. */
    boolean deleteFork(ForkId fork) {
        forks.remove(fork);
        return gone.add(fork);
    }

    void openHandle() {
        handles++;
    }

    void closeHandle() {
        handles--;
    }

    /** True when nothing refers to the value any more. */
    boolean unused() {
        return created && forks.isEmpty() && handles == 0;
    }

    /** For the leak report: who still refers to the value. */
    String users() {
        List<ForkId> sorted = forks.stream().sorted((a, b) -> a.createdOn() != b.createdOn()
                ? Integer.compare(a.createdOn(), b.createdOn()) : Long.compare(a.localId(), b.localId())).toList();
        return (created ? "" : "never created, ") + "user forks " + sorted + ", " + handles + " open handle(s) on"
                + " the owner";
    }
}
