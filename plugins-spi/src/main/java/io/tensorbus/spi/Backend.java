package io.tensorbus.spi;

import io.tensorbus.c10d.CollectiveMismatchException;
import io.tensorbus.c10d.CommunicationTimeoutException;
import io.tensorbus.c10d.PeerLostException;
import io.tensorbus.c10d.ReduceOp;
import io.vertx.core.Future;
import java.util.List;

/**
 * The communication engine of one process group, as c10d's {@code Backend} (gloo, NCCL, ...): point-to-point
 * messages and collectives over {@link DeviceBuffer}s, ranks counted inside the group. The api's
 * {@code ProcessGroup} checks every argument (ranks in range, sizes and dtypes agreeing) before it calls a
 * backend, so a backend may assume well-formed calls; it must still reject a peer that disagrees.
 *
 * <p>Contract, checked by the contract tests of this module's test jar:
 * <ul>
 *   <li>every method returns at once and never blocks the calling thread;</li>
 *   <li>collectives of one group are matched across ranks by the order they are called in; a rank that
 *       calls a different collective (op, dtype, shape, reduce op or root) fails with a
 *       {@link CollectiveMismatchException} instead of hanging;</li>
 *   <li>every operation fails with a {@link CommunicationTimeoutException} after the group's timeout, and
 *       with a {@link PeerLostException} when a member's connection is lost;</li>
 *   <li>point-to-point messages between two ranks with the same tag arrive in the order they were sent.</li>
 * </ul>
 * A buffer handed to an operation must not be touched by the caller until the returned future completes.
 */
public interface Backend {

    /** Receive from whichever rank sends first ({@code src} of {@link #recv}). */
    int ANY_SOURCE = -1;

    /** The backend's name, as its provider's. */
    String name();

    /** This process's rank in the group. */
    int rank();

    /** The number of ranks in the group. */
    int size();

    /**
     * Whether the backend takes host memory ({@link DeviceBuffer#host}) as gloo does; false for a device backend
     * that, as NCCL, moves only its device's memory. The group then stages host messages (the object
     * collectives' bytes) through its bound device. True by default.
     */
    default boolean acceptsHostMemory() {
        return true;
    }

    /** Sends {@code buffer} to rank {@code dst} with {@code tag}; completes when the bytes left this process. */
    Future<Void> send(DeviceBuffer buffer, int dst, int tag);

    /**
     * Receives a message with {@code tag} from {@code src} (or {@link #ANY_SOURCE}) into {@code buffer} and
     * completes with the sender's rank. A message whose size differs from the buffer's fails the receive.
     */
    Future<Integer> recv(DeviceBuffer buffer, int src, int tag);

    /**
     * Receives as {@link #recv} does, but on the calling thread, and only when the message from {@code src}
     * arrives within {@code patienceNanos} and the backend can take it without its event loop: a blocking
     * receive then spares a hand-off to the event loop and one back (each a thread wake-up). Returns the
     * sender's rank, or -1 when nothing was received (the caller then posts {@link #recv}). Called only where
     * blocking is allowed, never with {@link #ANY_SOURCE}. The default receives nothing this way.
     */
    default int tryRecvOnCallerThread(DeviceBuffer buffer, int src, int tag, long patienceNanos) {
        return -1;
    }

    /** Copies {@code root}'s buffer into every other rank's buffer. */
    Future<Void> broadcast(DeviceBuffer buffer, int root);

    /** Reduces the buffers of all ranks with {@code op} and leaves the result in every rank's buffer. */
    Future<Void> allReduce(DeviceBuffer buffer, ReduceOp op);

    /** Reduces the buffers of all ranks with {@code op} into {@code root}'s buffer (others are left undefined). */
    Future<Void> reduce(DeviceBuffer buffer, int root, ReduceOp op);

    /** Fills {@code outputs.get(r)} with rank r's {@code input}, on every rank. */
    Future<Void> allGather(List<DeviceBuffer> outputs, DeviceBuffer input);

    /** Fills {@code outputs.get(r)} with rank r's {@code input} on {@code root}; others pass an empty list. */
    Future<Void> gather(List<DeviceBuffer> outputs, DeviceBuffer input, int root);

    /** Copies {@code root}'s {@code inputs.get(r)} into rank r's {@code output}; others pass an empty list. */
    Future<Void> scatter(DeviceBuffer output, List<DeviceBuffer> inputs, int root);

    /** Reduces {@code inputs.get(r)} of all ranks with {@code op} into rank r's {@code output}. */
    Future<Void> reduceScatter(DeviceBuffer output, List<DeviceBuffer> inputs, ReduceOp op);

    /** Sends {@code inputs.get(r)} to rank r, which receives it in its {@code outputs.get(this rank)}. */
    Future<Void> allToAll(List<DeviceBuffer> outputs, List<DeviceBuffer> inputs);

    /** Completes once every rank of the group has called it. */
    Future<Void> barrier();

    /** Fails pending operations, closes connections and releases resources; idempotent. */
    Future<Void> close();

    /**
     * The running totals this backend keeps about its own work, published as meters while metrics are on; asked
     * once, after the group is up. None by default.
     */
    default List<BackendCounter> counters() {
        return List.of();
    }
}
