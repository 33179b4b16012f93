package io.tensorbus.distributed;

import io.tensorbus.internal.distributed.TimelineRecorder;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The job's timeline, as Horovod's: with {@code TENSORBUS_TIMELINE=DIR} every rank writes the spans of its
 * collectives, point-to-point messages, RPC calls and DDP steps to {@code DIR/rank_R.json} in the Trace Event Format;
 * {@link #merge} (the command {@code tensorbus timeline DIR -o job.json}) puts them on rank 0's clock, using the
 * offsets each rank measured through the store when its group started, and names the straggler of each collective:
 * the rank that called it last. Open the merged file in Perfetto ({@code ui.perfetto.dev}) or {@code chrome://tracing}.
 */
public final class Timeline {
    /** The environment variable naming the directory the ranks write to. */
    public static final String ENV = TimelineRecorder.ENV;
    private static final Pattern RANK_FILE = Pattern.compile("rank_(\\d+)\\.json");

    private Timeline() {
    }

    /**
     * The rank that called one collective last.
     *
     * @param group the group's name
     * @param seq the collective's number in the group (as in the flight recorder)
     * @param op the operation
     * @param rank the global rank that called it last
     * @param lagMillis how long after the first rank it called, in milliseconds
     */
    public record Straggler(String group, long seq, String op, int rank, double lagMillis) {
    }

    /**
     * What a merge found.
     *
     * @param ranks the ranks whose files were merged
     * @param events the events written
     * @param stragglers each collective that two or more ranks recorded, with its straggler, in call order
     */
    public record Report(List<Integer> ranks, int events, List<Straggler> stragglers) {
        /** The ranks, then the five collectives whose stragglers lagged most, then who lagged most often. */
        public String format() {
            StringBuilder b = new StringBuilder("merged the timelines of ranks " + ranks + ": " + events + " events, "
                    + stragglers.size() + " collectives");
            stragglers.stream().sorted(Comparator.comparingDouble(Straggler::lagMillis).reversed()).limit(5)
                    .forEach(s -> b.append(String.format("%n  %s #%d on group '%s': rank %d called last, %.3f ms after"
                            + " the first", s.op(), s.seq(), s.group(), s.rank(), s.lagMillis())));
            Map<Integer, Long> counts = new TreeMap<>();
            stragglers.forEach(s -> counts.merge(s.rank(), 1L, Long::sum));
            counts.entrySet().stream().max(Map.Entry.comparingByValue()).ifPresent(e -> b.append(String.format(
                    "%n  the straggler most often: rank %d (%d of %d collectives)", e.getKey(), e.getValue(),
                    stragglers.size())));
            return b.toString();
        }
    }

    /**
     * Merges the rank files of {@code dir} into {@code out} (a Trace Event Format object: {@code traceEvents}, and
     * {@code otherData.stragglers}), every time moved to rank 0's clock; an instant event {@code straggler} marks,
     * on its rank, each collective that rank called last.
     *
     * @throws IOException when the directory cannot be read or the output written
     * @throws IllegalArgumentException when {@code dir} holds no rank file, or one is not a timeline, naming it
     */
    public static Report merge(Path dir, Path out) throws IOException {
        Objects.requireNonNull(dir, "dir");
        Objects.requireNonNull(out, "out");
        Map<Integer, JsonArray> files = read(dir);
        JsonArray events = new JsonArray();
        Map<String, Map<Integer, JsonObject>> calls = new TreeMap<>();
        files.forEach((rank, file) -> shift(rank, file, events, calls));
        List<Straggler> stragglers = stragglers(calls, events);
        JsonArray found = new JsonArray();
        stragglers.forEach(s -> found.add(new JsonObject().put("group", s.group()).put("seq", s.seq())
                .put("op", s.op()).put("rank", s.rank()).put("lag_ms", s.lagMillis())));
        JsonObject merged = new JsonObject().put("traceEvents", events).put("displayTimeUnit", "ms")
                .put("otherData", new JsonObject().put("stragglers", found));
        write(out, merged);
        return new Report(List.copyOf(files.keySet()), events.size(), stragglers);
    }

    private static Map<Integer, JsonArray> read(Path dir) throws IOException {
        Map<Integer, JsonArray> files = new TreeMap<>();
        try (Stream<Path> list = Files.list(dir)) {
            for (Path f : list.sorted().toList()) {
                Matcher m = RANK_FILE.matcher(f.getFileName().toString());
                if (m.matches()) {
                    files.put(Integer.parseInt(m.group(1)), parse(f));
                }
            }
        }
        if (files.isEmpty()) {
            throw new IllegalArgumentException(dir + " holds no timeline (rank_R.json files, written by the ranks of"
                    + " a job run with " + ENV + "=" + dir + ")");
        }
        return files;
    }

    /** A rank's file: the Trace Event Format's array form, whose closing bracket a rank that died did not write. */
    private static JsonArray parse(Path f) throws IOException {
        String text = Files.readString(f, StandardCharsets.UTF_8).strip();
        if (text.endsWith(",")) {
            text = text.substring(0, text.length() - 1);
        }
        if (!text.endsWith("]")) {
            text = text + "]";
        }
        try {
            return new JsonArray(text);
        } catch (DecodeException e) {
            throw new IllegalArgumentException(f + " is not a timeline: " + e.getMessage());
        }
    }

    /** Adds {@code rank}'s events to {@code events} on rank 0's clock, and its collectives' begins to {@code calls}. */
    private static void shift(int rank, JsonArray file, JsonArray events, Map<String, Map<Integer, JsonObject>> calls) {
        long offset = 0;
        for (Object o : file) {
            JsonObject e = (JsonObject) o;
            if (TimelineRecorder.CLOCK_EVENT.equals(e.getString("name"))) {
                offset = e.getJsonObject("args").getLong("offset_us");
            }
        }
        for (Object o : file) {
            JsonObject e = ((JsonObject) o).copy();
            if (e.containsKey("ts")) {
                e.put("ts", e.getLong("ts") + offset);
            }
            events.add(e);
            if ("collective".equals(e.getString("cat")) && "b".equals(e.getString("ph"))) {
                JsonObject args = e.getJsonObject("args");
                calls.computeIfAbsent(args.getString("group") + "\u0000" + String.format("%019d", args.getLong("seq")),
                        k -> new TreeMap<>()).put(rank, e);
            }
        }
    }

    /** The rank that called each collective last, in call order; marks each on the timeline. */
    private static List<Straggler> stragglers(Map<String, Map<Integer, JsonObject>> calls, JsonArray events) {
        List<Straggler> found = new ArrayList<>();
        for (Map<Integer, JsonObject> byRank : calls.values()) {
            if (byRank.size() < 2) {
                continue;
            }
            Map.Entry<Integer, JsonObject> last = byRank.entrySet().stream()
                    .max(Comparator.comparingLong(x -> x.getValue().getLong("ts"))).orElseThrow();
            long first = byRank.values().stream().mapToLong(x -> x.getLong("ts")).min().orElseThrow();
            JsonObject e = last.getValue();
            JsonObject args = e.getJsonObject("args");
            Straggler s = new Straggler(args.getString("group"), args.getLong("seq"), e.getString("name"),
                    last.getKey(), (e.getLong("ts") - first) / 1000.0);
            found.add(s);
            events.add(new JsonObject().put("name", "straggler").put("cat", "collective").put("ph", "i")
                    .put("s", "p").put("ts", e.getLong("ts")).put("pid", last.getKey()).put("tid", e.getValue("tid"))
                    .put("args", new JsonObject().put("op", s.op()).put("seq", s.seq()).put("group", s.group())
                            .put("lag_ms", s.lagMillis())));
        }
        return found;
    }

    private static void write(Path out, JsonObject merged) throws IOException {
        Path parent = out.toAbsolutePath().getParent();
        Files.createDirectories(parent);
        Path tmp = Files.createTempFile(parent, ".timeline-", ".tmp");
        Files.writeString(tmp, merged.encode(), StandardCharsets.UTF_8);
        Files.move(tmp, out, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }
}
