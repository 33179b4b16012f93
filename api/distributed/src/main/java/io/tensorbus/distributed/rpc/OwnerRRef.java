package io.tensorbus.distributed.rpc;

import io.vertx.core.Promise;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The owner's record of one value (PyTorch's {@code OwnerRRef}): the value (or its pending computation),
 * the forks of the users that hold it, the forks the owner's own handles passed on that have not arrived
 * yet, and the open handles on the owner itself. A record may exist before the value's creation arrives
 * (messages may overtake it); such a placeholder expires when no creation came by its deadline. The value
 * goes when it was created and nothing refers to it. Guarded by its {@link RRefOwnerTable}'s lock.
 */
final class OwnerRRef {
    private static final Comparator<ForkId> ORDER = Comparator.comparingInt(ForkId::createdOn)
            .thenComparingLong(ForkId::localId);

    private final RRefId id;
    private final Promise<Object> value = Promise.promise();
    private final Set<ForkId> forks = new HashSet<>();
    private final Set<ForkId> passedOn = new HashSet<>();
    private boolean created;
    private int handles;
    private long expiresAt;

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

    boolean isCreated() {
        return created;
    }

    /** A user's fork, acknowledged (ACCEPT, or the creator's own); false when it was already there. */
    boolean accept(ForkId fork) {
        passedOn.remove(fork);
        return forks.add(fork);
    }

    /** A user is done with its fork (DELETE); false when the fork was not there. */
    boolean delete(ForkId fork) {
        return forks.remove(fork);
    }

    /** A handle here passed the value on as {@code fork}, which keeps it until it arrives or is dropped. */
    void passOn(ForkId fork) {
        passedOn.add(fork);
    }

    /** A fork passed on arrived back here, or its message never left. */
    void dropPassedOn(ForkId fork) {
        passedOn.remove(fork);
    }

    void openHandle() {
        handles++;
    }

    void closeHandle() {
        if (handles == 0) {
            throw new IllegalStateException("more handles of " + id + " closed than opened");
        }
        handles--;
    }

    /** A placeholder waits for its creation at least until {@code deadlineNanos}. */
    void keepUntil(long deadlineNanos) {
        expiresAt = expiresAt == 0 || deadlineNanos - expiresAt > 0 ? deadlineNanos : expiresAt;
    }

    /**
     * True for a placeholder that only waiters made (fetch, invoke) whose creation did not come by their
     * deadline. A placeholder that holds forks or handles waits for its creation however long it takes (a
     * creation is bounded by its caller's timeout only); if none ever comes, the leak report names it.
     */
    boolean expired(long nowNanos) {
        return !created && forks.isEmpty() && passedOn.isEmpty() && handles == 0 && nowNanos - expiresAt > 0;
    }

    /** True when nothing refers to the value any more. */
    boolean unused() {
        return created && forks.isEmpty() && passedOn.isEmpty() && handles == 0;
    }

    /** For the leak report: who still refers to the value. */
    String users() {
        List<ForkId> users = forks.stream().sorted(ORDER).toList();
        List<ForkId> moving = passedOn.stream().sorted(ORDER).toList();
        return (created ? "" : "never created, ") + "user forks " + users
                + (moving.isEmpty() ? "" : ", forks passed on but not arrived " + moving) + ", " + handles
                + " open handle(s) on the owner";
    }
}
