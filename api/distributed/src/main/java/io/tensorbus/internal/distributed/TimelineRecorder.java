package io.tensorbus.internal.distributed;

import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.LongUnaryOperator;

/**
 * One rank's timeline (Horovod's timeline): the spans of its collectives, messages, RPC calls and DDP steps, written
 * as they end to {@code DIR/rank_R.json} in the Trace Event Format's JSON array form (Chrome, Perfetto), whose closing
 * bracket may be missing, so that a rank that dies leaves a readable file. {@code TENSORBUS_TIMELINE=DIR} turns it on;
 * {@code io.tensorbus.distributed.Timeline} merges the ranks' files on rank 0's clock.
 *
 * <p>Times are microseconds since the epoch on this process's monotonic clock; the offset to rank 0's clock, measured
 * through the store at the start, is written as the metadata event {@value #CLOCK_EVENT}. Events are formatted on
 * the thread that ends a span and written by a daemon thread, so a span costs the recording thread a string and a
 * queue offer. Thread-safe.
 */
public final class TimelineRecorder {
    /** The environment variable naming the directory. */
    public static final String ENV = "TENSORBUS_TIMELINE";
    /** The metadata event carrying the offset to rank 0's clock ({@code args.offset_us}, {@code args.rtt_us}). */
    public static final String CLOCK_EVENT = "tensorbus_clock";
    private static final Map<Integer, TimelineRecorder> BY_RANK = new ConcurrentHashMap<>();
    private static final String END = "\u0000end";
    private static volatile boolean any;

    private final int rank;
    private final Path file;
    private final long baseNanos = System.nanoTime();
    private final long baseEpochMicros = epochMicros(Instant.now());
    private final LinkedBlockingQueue<String> lines = new LinkedBlockingQueue<>();
    private final Thread writer;
    private final Map<String, Integer> lanes = new ConcurrentHashMap<>();

    private TimelineRecorder(int rank, Path file, BufferedWriter out) {
        this.rank = rank;
        this.file = file;
        this.writer = Thread.ofPlatform().daemon().name("tensorbus-timeline-" + rank).start(() -> drain(out));
        offer(new JsonObject().put("name", "process_name").put("ph", "M").put("pid", rank)
                .put("args", new JsonObject().put("name", "rank " + rank)));
    }

    /**
     * Opens the timeline of global rank {@code rank} when {@code env} names a directory ({@value #ENV}), once per
     * rank in this JVM; null when it names none.
     *
     * @throws UncheckedIOException when the directory or the file cannot be made
     */
    public static TimelineRecorder open(Map<String, String> env, int rank) {
        String dir = env.get(ENV);
        if (dir == null || dir.isBlank()) {
            return null;
        }
        TimelineRecorder t = BY_RANK.computeIfAbsent(rank, r -> create(Path.of(dir), r));
        any = true;
        return t;
    }

    private static TimelineRecorder create(Path dir, int rank) {
        Path file = dir.resolve("rank_" + rank + ".json");
        try {
            Files.createDirectories(dir);
            BufferedWriter out = Files.newBufferedWriter(file, StandardCharsets.UTF_8);
            out.write("[\n");
            return new TimelineRecorder(rank, file, out);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write the timeline of rank " + rank + " to " + file + " ("
                    + ENV + "): " + e.getMessage(), e);
        }
    }

    /** The timeline of global rank {@code rank}, or null when it has none (the common case costs a volatile read). */
    public static TimelineRecorder of(int rank) {
        return any ? BY_RANK.get(rank) : null;
    }

    /** Microseconds since the epoch: the clock in microseconds, not milliseconds, so that two processes agree. */
    private static long epochMicros(Instant now) {
        return now.getEpochSecond() * 1_000_000 + now.getNano() / 1000;
    }

    /** Now on global rank {@code rank}'s timeline, or 0 when it has none (then a volatile read is all it costs). */
    public static long now(int rank) {
        TimelineRecorder t = of(rank);
        return t == null ? 0 : t.now();
    }

    /** True when some rank of this JVM has a timeline: sites whose rank costs work to find check this first. */
    public static boolean active() {
        return any;
    }

    /**
     * {@code work}, which began at {@code startMicros} ({@link #now(int)}; 0: nothing is drawn), drawn on rank
     * {@code rank}'s timeline as a {@link #span} when it completes, its failure's message added to {@code args}.
     */
    public static <T> Future<T> spanWhenDone(int rank, long startMicros, String cat, String name, String lane, long seq,
                                             JsonObject args, Future<T> work) {
        return spanWhenDone(rank, startMicros, end -> 0, cat, name, lane, seq, args, work);
    }

    /**
     * {@link #spanWhenDone(int, long, String, String, String, long, JsonObject, Future)}, marked started at what
     * {@code startedAt} answers for the span's end (both in this timeline's microseconds; no mark when that is not
     * after the start).
     */
    public static <T> Future<T> spanWhenDone(int rank, long startMicros, LongUnaryOperator startedAt, String cat,
                                             String name, String lane, long seq, JsonObject args, Future<T> work) {
        TimelineRecorder t = startMicros == 0 ? null : of(rank);
        if (t != null) {
            work.onComplete(r -> {
                long end = t.now();
                t.span(cat, name, lane, seq, startMicros, startedAt.applyAsLong(end), end, r.failed()
                        ? args.put("error", String.valueOf(r.cause().getMessage())) : args);
            });
        }
        return work;
    }

    /** The file it writes. */
    public Path file() {
        return file;
    }

    /** Now, in microseconds since the epoch on this process's monotonic clock. */
    public long now() {
        return baseEpochMicros + (System.nanoTime() - baseNanos) / 1000;
    }

    /**
     * A span of category {@code cat} (collective, p2p, rpc, ddp) from {@code startMicros} to now, on its lane
     * {@code lane}, as an async begin and end pair; {@code seq} tells overlapping spans of one lane apart.
     */
    public void span(String cat, String name, String lane, long seq, long startMicros, JsonObject args) {
        span(cat, name, lane, seq, startMicros, 0, now(), args);
    }

    /**
     * A {@link #span} from {@code startMicros} (queued) to {@code endMicros}, marked {@code started} inside at
     * {@code startedMicros} (an async instant event) when that is later than the start.
     */
    public void span(String cat, String name, String lane, long seq, long startMicros, long startedMicros,
                     long endMicros, JsonObject args) {
        int tid = lane(lane);
        long id = (long) tid << 40 | (seq & ((1L << 40) - 1));
        offer(new JsonObject().put("name", name).put("cat", cat).put("ph", "b").put("id", id).put("ts", startMicros)
                .put("pid", rank).put("tid", tid).put("args", args));
        if (startedMicros > startMicros) {
            offer(new JsonObject().put("name", "started").put("cat", cat).put("ph", "n").put("id", id)
                    .put("ts", startedMicros).put("pid", rank).put("tid", tid));
        }
        offer(new JsonObject().put("name", name).put("cat", cat).put("ph", "e").put("id", id).put("ts", endMicros)
                .put("pid", rank).put("tid", tid));
    }

    /** A span that does not overlap others of its lane (a DDP step), as one complete event. */
    public void complete(String cat, String name, String lane, long startMicros, JsonObject args) {
        long end = now();
        offer(new JsonObject().put("name", name).put("cat", cat).put("ph", "X").put("ts", startMicros)
                .put("dur", Math.max(0, end - startMicros)).put("pid", rank).put("tid", lane(lane)).put("args", args));
    }

    /** Records that rank 0's clock reads {@code offsetMicros} more than this one's, measured in {@code rttMicros}. */
    public void clockOffset(long offsetMicros, long rttMicros) {
        offer(new JsonObject().put("name", CLOCK_EVENT).put("ph", "M").put("pid", rank).put("args",
                new JsonObject().put("offset_us", offsetMicros).put("rtt_us", rttMicros)));
    }

    private int lane(String name) {
        Integer tid = lanes.get(name);
        if (tid != null) {
            return tid;
        }
        synchronized (lanes) {
            return lanes.computeIfAbsent(name, n -> {
                int t = lanes.size() + 1;
                offer(new JsonObject().put("name", "thread_name").put("ph", "M").put("pid", rank).put("tid", t)
                        .put("args", new JsonObject().put("name", n)));
                return t;
            });
        }
    }

    private void offer(JsonObject event) {
        lines.offer(event.encode());
    }

    private void drain(BufferedWriter out) {
        try (out) {
            while (true) {
                String line = lines.poll(200, TimeUnit.MILLISECONDS);
                if (line == null) {
                    out.flush();
                    continue;
                }
                if (line == END) {
                    out.flush();
                    return;
                }
                out.write(line);
                out.write(",\n");
            }
        } catch (IOException e) {
            System.err.println("tensorbus: the timeline of rank " + rank + " stopped: cannot write " + file + ": " + e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Writes what is queued and closes the file (its later spans are dropped); waits at most 5 s. */
    public void close() {
        if (BY_RANK.remove(rank, this)) {
            lines.offer(END);
            try {
                writer.join(5000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
