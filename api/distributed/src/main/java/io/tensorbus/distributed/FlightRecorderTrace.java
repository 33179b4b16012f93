package io.tensorbus.distributed;

import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Stream;

/**
 * Reads the flight-recorder dumps of every rank ({@link FlightRecorder#dump}) and says where the ranks part
 * (PyTorch's {@code torchfrtrace}): per group, the first collective number at which a rank issued another operation
 * than the others (other name, sizes or dtype), or none at all while the others did, naming the ranks; ranks of a
 * group with no dump; and operations that never completed. {@code tensorbus fr-trace DIR} prints it.
 */
public final class FlightRecorderTrace {
    private FlightRecorderTrace() {
    }

    /**
     * What the dumps say.
     *
     * @param dumps the dump files read
     * @param findings one sentence per problem, the group's first divergence first; empty when the ranks agree
     */
    public record Report(int dumps, List<String> findings) {
        /** The report as printed: the findings, or a line saying the ranks agree. */
        public String format() {
            if (findings.isEmpty()) {
                return "fr-trace: " + dumps + " dump(s): every rank issued the same collectives";
            }
            return "fr-trace: " + dumps + " dump(s)\n" + String.join("\n", findings);
        }
    }

    /** One rank's dump of one group. */
    private record Dump(int rank, List<Integer> groupRanks, TreeMap<Long, JsonObject> collectives,
                        List<JsonObject> all) {
        long lastSeq() {
            return collectives.isEmpty() ? 0 : collectives.lastKey();
        }

        long firstSeq() {
            return collectives.isEmpty() ? Long.MAX_VALUE : collectives.firstKey();
        }
    }

    /**
     * Analyses every {@code .json} dump in {@code dir}.
     *
     * @throws IOException when the directory or a file cannot be read
     * @throws IllegalArgumentException when a file is not a flight-recorder dump, naming it
     */
    public static Report analyze(Path dir) throws IOException {
        Objects.requireNonNull(dir, "dir");
        Map<String, Map<Integer, Dump>> byGroup = new TreeMap<>();
        int files = 0;
        try (Stream<Path> list = Files.list(dir)) {
            for (Path f : list.filter(p -> p.toString().endsWith(".json")).sorted().toList()) {
                JsonObject j = read(f);
                Dump d = dump(f, j);
                byGroup.computeIfAbsent(j.getString("group"), g -> new TreeMap<>()).put(d.rank(), d);
                files++;
            }
        }
        List<String> findings = new ArrayList<>();
        byGroup.forEach((group, dumps) -> findings.addAll(analyzeGroup(group, dumps)));
        return new Report(files, List.copyOf(findings));
    }

    private static JsonObject read(Path f) throws IOException {
        try {
            JsonObject j = new JsonObject(Files.readString(f, StandardCharsets.UTF_8));
            if (j.getInteger("version") == null || j.getJsonArray("entries") == null || j.getString("group") == null) {
                throw new IllegalArgumentException(f + " is not a flight-recorder dump (no version, group or entries)");
            }
            return j;
        } catch (DecodeException | ClassCastException e) {
            throw new IllegalArgumentException(f + " is not a flight-recorder dump: " + e.getMessage());
        }
    }

    private static Dump dump(Path f, JsonObject j) {
        TreeMap<Long, JsonObject> collectives = new TreeMap<>();
        List<JsonObject> all = new ArrayList<>();
        for (Object o : j.getJsonArray("entries")) {
            JsonObject e = (JsonObject) o;
            all.add(e);
            if ("collective".equals(e.getString("kind"))) {
                collectives.put(e.getLong("seq"), e);
            }
        }
        List<Integer> members = new ArrayList<>();
        j.getJsonArray("group_ranks", new JsonArray()).forEach(r -> members.add(((Number) r).intValue()));
        return new Dump(j.getInteger("rank", -1), members, collectives, all);
    }

    private static List<String> analyzeGroup(String group, Map<Integer, Dump> dumps) {
        List<String> out = new ArrayList<>();
        TreeSet<Integer> members = new TreeSet<>();
        dumps.values().forEach(d -> members.addAll(d.groupRanks()));
        TreeSet<Integer> silent = new TreeSet<>(members);
        silent.removeAll(dumps.keySet());
        if (!silent.isEmpty()) {
            out.add("group '" + group + "': no dump from rank(s) " + silent + " (they may have hung or died)");
        }
        String divergence = firstDivergence(group, dumps);
        if (divergence != null) {
            out.add(divergence);
        }
        dumps.forEach((rank, d) -> d.all().stream().filter(e -> !"completed".equals(e.getString("state")))
                .findFirst().ifPresent(e -> out.add("group '" + group + "': rank " + rank + "'s " + describe(e) + " #"
                        + e.getLong("seq") + " " + e.getString("state") + (e.getString("error") == null ? ""
                        : ": " + e.getString("error")))));
        return out;
    }

    /** The first collective number at which the dumps disagree, said in a sentence; null when they agree. */
    private static String firstDivergence(String group, Map<Integer, Dump> dumps) {
        long from = dumps.values().stream().mapToLong(Dump::firstSeq).max().orElse(Long.MAX_VALUE);
        long to = dumps.values().stream().mapToLong(Dump::lastSeq).max().orElse(0);
        for (long seq = Math.max(1, from); seq <= to; seq++) {
            Map<String, List<Integer>> byOp = new LinkedHashMap<>();
            List<Integer> missing = new ArrayList<>();
            for (Map.Entry<Integer, Dump> d : dumps.entrySet()) {
                JsonObject e = d.getValue().collectives().get(seq);
                if (e == null) {
                    missing.add(d.getKey());
                } else {
                    byOp.computeIfAbsent(describe(e), k -> new ArrayList<>()).add(d.getKey());
                }
            }
            if (byOp.size() > 1) {
                return mismatch(group, seq, byOp);
            }
            if (!missing.isEmpty()) {
                String op = byOp.keySet().iterator().next();
                return "group '" + group + "': collective #" + seq + " " + op + " was issued by rank(s) "
                        + byOp.get(op) + " and never by rank(s) " + missing + lastOf(dumps, missing);
            }
        }
        return null;
    }

    private static String mismatch(String group, long seq, Map<String, List<Integer>> byOp) {
        List<Map.Entry<String, List<Integer>>> sorted = new ArrayList<>(byOp.entrySet());
        sorted.sort((a, b) -> b.getValue().size() - a.getValue().size());
        Map.Entry<String, List<Integer>> most = sorted.getFirst();
        StringBuilder s = new StringBuilder("group '" + group + "': collective #" + seq + " differs: rank(s) "
                + most.getValue() + " issued " + most.getKey());
        for (Map.Entry<String, List<Integer>> other : sorted.subList(1, sorted.size())) {
            s.append(", rank(s) ").append(other.getValue()).append(" issued ").append(other.getKey());
        }
        if (sorted.size() == 2 && most.getValue().size() > sorted.get(1).getValue().size()) {
            s.append(": rank(s) ").append(sorted.get(1).getValue()).append(" skipped or reordered ")
                    .append(most.getKey()).append(" #").append(seq);
        }
        return s.toString();
    }

    private static String lastOf(Map<Integer, Dump> dumps, List<Integer> ranks) {
        StringBuilder s = new StringBuilder();
        for (int r : ranks) {
            Dump d = dumps.get(r);
            s.append(d.lastSeq() == 0 ? " (rank " + r + " issued no collective)" : " (rank " + r + "'s last was #"
                    + d.lastSeq() + " " + describe(d.collectives().get(d.lastSeq())) + ")");
        }
        return s.toString();
    }

    /** {@code op(dtype[sizes], ...)}, as in the error messages of the backends. */
    private static String describe(JsonObject e) {
        StringBuilder s = new StringBuilder(e.getString("op")).append('(');
        JsonArray sizes = e.getJsonArray("sizes", new JsonArray());
        for (int i = 0; i < sizes.size(); i++) {
            s.append(i == 0 ? "" : ", ").append(e.getString("dtype", "")).append(sizes.getJsonArray(i).encode());
        }
        return s.append(')').toString();
    }
}
