package io.tensorbus.distributed;

import io.tensorbus.DType;
import io.tensorbus.internal.distributed.Meters;
import io.tensorbus.internal.distributed.TimelineRecorder;
import io.tensorbus.spi.DeviceBuffer;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;

/**
 * The flight recorder of one process group (PyTorch's NCCL flight recorder): a ring buffer of the last
 * {@link #capacity()} operations this rank issued on the group, each with its sequence number (collectives are
 * numbered 1, 2, ... in the order every member must issue them; point-to-point operations have numbers of their
 * own), name, tensor sizes and dtype, state and times. When an operation fails (a timeout, a lost peer, a mismatch)
 * the whole buffer is written, once per group, to {@code DIR/rank_R_GROUP.json} if a directory is set with
 * {@code TENSORBUS_FLIGHT_RECORDER_DIR} or {@code -Dtensorbus.flightRecorder.dir}; {@link #dump(Path)} writes it at
 * any time. {@code tensorbus fr-trace DIR} ({@link FlightRecorderTrace}) reads the dumps of every rank and names the
 * rank and the collective where they part.
 *
 * <p>{@code TENSORBUS_FLIGHT_RECORDER_SIZE} sets the capacity (2000 by default; 0 turns recording off). Thread-safe.
 */
public final class FlightRecorder {
    /** The environment variable naming the dump directory. */
    public static final String DIR_ENV = "TENSORBUS_FLIGHT_RECORDER_DIR";
    /** The system property naming the dump directory (before {@link #DIR_ENV}). */
    public static final String DIR_PROPERTY = "tensorbus.flightRecorder.dir";
    /** The environment variable setting the capacity. */
    public static final String SIZE_ENV = "TENSORBUS_FLIGHT_RECORDER_SIZE";
    /** The timer of collectives ({@link io.tensorbus.distributed.metrics.TensorbusMetrics}). */
    static final String COLLECTIVE_METER = Meters.PREFIX + "collective";
    /** The timer of point-to-point operations. */
    static final String P2P_METER = Meters.PREFIX + "p2p";
    private static final System.Logger LOG = System.getLogger(FlightRecorder.class.getName());

    /** One recorded operation; its state and end time change as it completes. */
    private static final class Entry {
        final long seq;
        final boolean collective;
        final String op;
        final List<long[]> sizes;
        final String dtype;
        final int peer;
        final long createdNanos;
        volatile String state = "scheduled";
        volatile long endNanos;
        volatile String error;

        Entry(long seq, boolean collective, String op, List<long[]> sizes, String dtype, int peer,
              long createdNanos) {
            this.seq = seq;
            this.collective = collective;
            this.op = op;
            this.sizes = sizes;
            this.dtype = dtype;
            this.peer = peer;
            this.createdNanos = createdNanos;
        }

        JsonObject toJson(long epochMillis, long epochNanos) {
            long createdEpochMillis = epochMillis + Math.floorDiv(createdNanos - epochNanos, 1_000_000L);
            JsonArray shapes = new JsonArray();
            sizes.forEach(s -> shapes.add(new JsonArray(Arrays.stream(s).boxed().toList())));
            JsonObject j = new JsonObject().put("seq", seq).put("kind", collective ? "collective" : "p2p")
                    .put("op", op).put("sizes", shapes).put("dtype", dtype).put("state", state)
                    .put("time_created_ms", createdEpochMillis);
            if (peer >= 0) {
                j.put("peer", peer);
            }
            if (endNanos != 0) {
                j.put("duration_ms", (endNanos - createdNanos) / 1e6);
            }
            if (error != null) {
                j.put("error", error);
            }
            return j;
        }
    }

    /** What tells the meters of one kind of operation apart. */
    private record MeterKey(boolean collective, String op, DType dtype, String size) {
    }

    private final ProcessGroup group;
    private final Map<MeterKey, Meters.Operation> meters = new ConcurrentHashMap<>();
    private final Entry[] ring;
    // The wall clock read once: an entry's creation time derives from it and its nanoTime, saving a clock read
    // per operation.
    private final long epochMillis = System.currentTimeMillis();
    private final long epochNanos = System.nanoTime();
    private final AtomicBoolean dumped = new AtomicBoolean();
    private long collectives;
    private long p2p;
    private long written;
    /** When the group's last collective ended on the timeline, in its microseconds. */
    private long lastCollectiveEndMicros;

    FlightRecorder(ProcessGroup group) {
        this.group = group;
        this.ring = new Entry[capacityFromEnvironment()];
    }

    private static int capacityFromEnvironment() {
        String v = System.getenv(SIZE_ENV);
        if (v == null || v.isBlank()) {
            return 2000;
        }
        try {
            return Math.max(0, Math.min(1 << 20, Integer.parseInt(v.trim())));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(SIZE_ENV + "=" + v + " is not a whole number of entries");
        }
    }

    /** How many operations the buffer keeps (0: recording is off). */
    public int capacity() {
        return ring.length;
    }

    /** The collectives issued on the group so far (the last one's sequence number). */
    public synchronized long collectiveCount() {
        return collectives;
    }

    /**
     * Starts a collective ({@code work} calls the backend), records it and follows it to its end.
     *
     * @return the future {@code work} answered
     */
    <T> Future<T> collective(String op, Supplier<Future<T>> work, DeviceBuffer... buffers) {
        long begin = Meters.start();
        long timelineBegin = timelineNow();
        return record(true, op, -1, begin, timelineBegin, work.get(), buffers);
    }

    /** Starts a point-to-point operation with {@code peer} (a global rank, or -1 for any), records and follows it. */
    <T> Future<T> p2p(String op, int peer, Supplier<Future<T>> work, DeviceBuffer... buffers) {
        long begin = Meters.start();
        long timelineBegin = timelineNow();
        return record(false, op, peer, begin, timelineBegin, work.get(), buffers);
    }

    /** The time on this rank's timeline, or 0 when it has none. */
    long timelineNow() {
        return TimelineRecorder.active() ? TimelineRecorder.now(globalRank()) : 0;
    }

    /**
     * Records a receive from {@code peer} into {@code buffer} that the caller's thread completed itself, begun at
     * {@code begin} ({@link Meters#start()}) and {@code timelineBegin} ({@link #timelineNow()}).
     */
    void received(long begin, long timelineBegin, int peer, DeviceBuffer buffer) {
        record(false, "recv", peer, begin, timelineBegin, Future.succeededFuture(), buffer);
    }

    private <T> Future<T> record(boolean collective, String op, int peer, long begin, long timelineBegin,
                                 Future<T> work, DeviceBuffer... buffers) {
        long bytes = buffers.length == 0 ? 0 : buffers[0].byteSize();
        DType dtype = buffers.length == 0 ? null : buffers[0].dtype();
        Meters.Operation m = begin == 0 ? null : meters(collective, op, dtype, bytes);
        List<long[]> sizes = ring.length == 0 ? List.of() : shapes(buffers);
        Entry e = null;
        long seq;
        synchronized (this) {
            seq = collective ? ++collectives : ++p2p;
            if (ring.length > 0) {
                e = new Entry(seq, collective, op, sizes, dtype == null ? "" : dtype.toString(), peer,
                        begin != 0 ? begin : System.nanoTime());
                ring[(int) (written++ % ring.length)] = e;
            }
        }
        if (timelineBegin != 0) {
            timeline(collective, op, peer, seq, bytes, dtype, timelineBegin, work);
        }
        if (e != null || m != null) {
            // One listener and one clock read at the end serve both the meters and the entry.
            Entry entry = e;
            work.onComplete(ar -> {
                long end = System.nanoTime();
                if (m != null) {
                    m.record(begin, end, bytes, ar.cause());
                }
                if (entry != null) {
                    finish(entry, end, ar.cause());
                }
            });
        }
        return work;
    }

    /**
     * Draws the operation on the rank's timeline when it ends: from its call (queued) to its end, a collective marked
     * started when the group's collective before it ended, if that was later than the call (backends run a group's
     * collectives one at a time, in call order, so that is when it could start).
     */
    private void timeline(boolean collective, String op, int peer, long seq, long bytes, DType dtype, long begin,
                          Future<?> work) {
        JsonObject args = new JsonObject().put("group", group.name()).put("seq", seq).put("bytes", bytes)
                .put("dtype", dtype == null ? "none" : dtype.toString());
        if (peer >= 0) {
            args.put("peer", peer);
        }
        if (collective) {
            TimelineRecorder.spanWhenDone(globalRank(), begin, end -> startedAt(begin, end), "collective", op,
                    "collectives " + group.name(), seq, args, work);
        } else {
            TimelineRecorder.spanWhenDone(globalRank(), begin, "p2p", op, "p2p " + group.name(), seq, args, work);
        }
    }

    /** When a collective called at {@code calledMicros} and ended at {@code endMicros} started (see timeline). */
    private synchronized long startedAt(long calledMicros, long endMicros) {
        long started = Math.max(calledMicros, lastCollectiveEndMicros);
        lastCollectiveEndMicros = endMicros;
        return started;
    }

    private static List<long[]> shapes(DeviceBuffer[] buffers) {
        List<long[]> sizes = new ArrayList<>(buffers.length);
        for (DeviceBuffer b : buffers) {
            sizes.add(b.shape());
        }
        return sizes;
    }

    /** The meters of {@code op} on {@code dtype} (null: none) in the size class of {@code bytes}, kept per group. */
    private Meters.Operation meters(boolean collective, String op, DType dtype, long bytes) {
        String size = Meters.sizeClass(bytes);
        return meters.computeIfAbsent(new MeterKey(collective, op, dtype, size), k -> Meters.operation(
                collective ? COLLECTIVE_METER : P2P_METER, true, "group", group.name(), "rank",
                Integer.toString(globalRank()), "op", op, "dtype", dtype == null ? "none" : dtype.toString(), "size",
                size));
    }

    private void finish(Entry e, long endNanos, Throwable cause) {
        e.endNanos = endNanos;
        e.error = cause == null ? null : String.valueOf(cause.getMessage());
        e.state = cause == null ? "completed" : "failed";
        if (DebugLevel.current().includes(DebugLevel.DETAIL)) {
            LOG.log(System.Logger.Level.INFO, "{0} #{1} {2} on rank {3}: {4} in {5} ms", group.name(), e.seq, e.op,
                    globalRank(), e.state, (e.endNanos - e.createdNanos) / 1e6);
        }
        if (cause != null && dumped.compareAndSet(false, true)) {
            dumpOnFailure();
        }
    }

    private void dumpOnFailure() {
        String dir = System.getProperty(DIR_PROPERTY, System.getenv(DIR_ENV));
        if (dir == null || dir.isBlank()) {
            return;
        }
        Path file = Path.of(dir).resolve("rank_" + globalRank() + "_" + group.name().replaceAll("[^A-Za-z0-9_.-]", "_")
                + ".json");
        try {
            dump(file);
            LOG.log(System.Logger.Level.WARNING, "flight recorder of group {0} on rank {1} written to {2}",
                    group.name(), globalRank(), file);
        } catch (IOException | RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "cannot write the flight recorder to " + file + ": " + e);
        }
    }

    /** The recorded operations, oldest first, in the dump's JSON form. */
    public synchronized JsonObject toJson() {
        JsonArray entries = new JsonArray();
        long first = Math.max(0, written - ring.length);
        for (long i = first; i < written; i++) {
            entries.add(ring[(int) (i % ring.length)].toJson(epochMillis, epochNanos));
        }
        return new JsonObject().put("version", 1).put("group", group.name()).put("rank", globalRank())
                .put("group_rank", group.rank()).put("group_ranks", new JsonArray(Arrays.stream(group.ranks()).boxed()
                        .toList())).put("collectives", collectives).put("entries", entries);
    }

    /**
     * Writes the recorded operations as JSON to {@code file} (its folders are made; the file appears whole).
     *
     * @throws IOException when it cannot be written
     */
    public void dump(Path file) throws IOException {
        Path parent = file.toAbsolutePath().getParent();
        Files.createDirectories(parent);
        Path tmp = Files.createTempFile(parent, ".fr-", ".tmp");
        Files.writeString(tmp, toJson().encodePrettily(), StandardCharsets.UTF_8);
        Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }

    private int globalRank() {
        return group.rank() < 0 ? -1 : group.globalRank(group.rank());
    }
}
