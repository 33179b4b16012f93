package io.tensorbus.distributed.algorithms;

import io.tensorbus.distributed.ProcessGroup;

/**
 * Something that runs collectives once per training iteration and can shadow them for ranks that ran out of data
 * ({@code torch.distributed.algorithms.Joinable}): DistributedDataParallel and ZeroRedundancyOptimizer. Each
 * iteration it calls {@link Join#notifyJoinContext} before its collectives; a rank that closed its {@link Join}
 * runs the {@link JoinHook} instead.
 */
public interface Joinable {
    /** The hook a joined rank runs in place of this joinable's collectives ({@code join_hook()}). */
    JoinHook joinHook();

    /** The group whose collectives the hook shadows ({@code join_process_group}). */
    ProcessGroup joinProcessGroup();
}
