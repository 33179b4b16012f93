package io.tensorbus.workloads.cli;

/**
 * What the launchers of a job's other nodes tell this one while its ranks run: the launcher's supervisor asks each
 * {@code --monitor-interval} whether the ranks must stop, and says when one of its own ranks failed.
 */
interface JobPeers {
    /** Why this node's ranks must stop now, or null while they may run. */
    String stopReason();

    /** One of this node's ranks failed for {@code why}: the other nodes hear of it. */
    void rankFailed(String why);
}
