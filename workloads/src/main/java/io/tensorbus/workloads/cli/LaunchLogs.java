package io.tensorbus.workloads.cli;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;

/**
 * Where the launched processes' output goes (torchrun's {@code --log-dir}, {@code --redirects}, {@code --tee} and
 * {@code --local-ranks-filter}): the launcher's console, each line prefixed with its rank, and with a log directory
 * one file per stream, local rank and attempt, {@code DIR/attempt_K/LOCAL_RANK/stdout.log} and {@code stderr.log}
 * (attempt 0 is the first start, attempt K the K-th restart).
 *
 * <p>A stream that is redirected goes to its file only; one that is teed goes to both. With a log directory and
 * neither option, every stream is teed. {@code localRanksFilter} keeps the console to the listed local ranks'
 * output (files are whole). Streams are numbered as torchrun's {@code Std}: 0 none, 1 stdout, 2 stderr, 3 both;
 * a spec is one number for every local rank or {@code LOCAL_RANK:N} pairs, as {@code 0:3,1:2}.
 *
 * @param logDir the log directory, or null
 * @param redirects the streams sent to files only, by local rank, where the spec named local ranks
 * @param redirectAll the streams sent to files only for the other local ranks
 * @param tee the streams sent to files and the console, by local rank
 * @param teeAll the streams sent to both for the other local ranks
 * @param localRanksFilter the local ranks whose output reaches the console, or null for all
 */
public record LaunchLogs(Path logDir, Map<Integer, Integer> redirects, int redirectAll, Map<Integer, Integer> tee,
        int teeAll, Set<Integer> localRanksFilter) {
    /** Checks the maps.
     *
     * @throws NullPointerException for null maps
     */
    public LaunchLogs {
        Objects.requireNonNull(redirects, "redirects");
        Objects.requireNonNull(tee, "tee");
    }

    /** stdout's bit in a stream set. */
    static final int OUT = 1;
    /** stderr's bit in a stream set. */
    static final int ERR = 2;

    /** Output to the console only, as before any of the options. */
    static LaunchLogs consoleOnly() {
        return new LaunchLogs(null, Map.of(), 0, Map.of(), 0, null);
    }

    /**
     * Reads the options' values (null when not given).
     *
     * @throws IllegalArgumentException for a malformed spec or filter, or redirects or tee without a log directory
     */
    static LaunchLogs parse(String logDir, String redirects, String tee, String filter) {
        Map<Integer, Integer> r = new HashMap<>();
        Map<Integer, Integer> t = new HashMap<>();
        int rAll = redirects == null ? 0 : spec("--redirects", redirects, r);
        int tAll = tee == null ? 0 : spec("--tee", tee, t);
        if (logDir == null && (redirects != null || tee != null)) {
            throw new IllegalArgumentException("--redirects and --tee write files: give --log-dir DIR too");
        }
        if (logDir != null && redirects == null && tee == null) {
            tAll = OUT | ERR;
        }
        Set<Integer> ranks = filter == null ? null : ranks(filter);
        return new LaunchLogs(logDir == null ? null : Path.of(logDir), Map.copyOf(r), rAll, Map.copyOf(t), tAll,
                ranks);
    }

    /** One number for all (returned), or {@code L:N} pairs into {@code perRank} (then 0 is returned). */
    private static int spec(String option, String value, Map<Integer, Integer> perRank) {
        String v = value.trim();
        if (!v.contains(":")) {
            return stream(option, v);
        }
        for (String pair : v.split(",")) {
            String[] kv = pair.split(":", 2);
            if (kv.length != 2) {
                throw new IllegalArgumentException(option + " '" + value + "': give one of 0-3, or LOCAL_RANK:N pairs"
                        + " such as 0:3,1:2");
            }
            perRank.put(localRank(option, kv[0]), stream(option, kv[1]));
        }
        return 0;
    }

    private static int stream(String option, String v) {
        return switch (v.trim()) {
            case "0" -> 0;
            case "1" -> OUT;
            case "2" -> ERR;
            case "3" -> OUT | ERR;
            default -> throw new IllegalArgumentException(option + " takes 0 (none), 1 (stdout), 2 (stderr) or 3"
                    + " (both), or LOCAL_RANK:N pairs; got '" + v + "'");
        };
    }

    private static Set<Integer> ranks(String filter) {
        Set<Integer> out = new TreeSet<>();
        for (String s : filter.split(",")) {
            out.add(localRank("--local-ranks-filter", s));
        }
        return Set.copyOf(out);
    }

    private static int localRank(String option, String s) {
        try {
            int r = Integer.parseInt(s.trim());
            if (r >= 0) {
                return r;
            }
        } catch (NumberFormatException e) {
            // Said below with what is allowed.
        }
        throw new IllegalArgumentException(option + " takes local ranks (0 or more), got '" + s + "'");
    }

    /** True when stream {@code stream} of local rank {@code localRank} reaches the console. */
    boolean toConsole(int localRank, int stream) {
        boolean redirected = (redirects.getOrDefault(localRank, redirectAll) & stream) != 0;
        return !redirected && (localRanksFilter == null || localRanksFilter.contains(localRank));
    }

    /** The file of stream {@code stream} of local rank {@code localRank} in attempt {@code attempt}, or null. */
    Path file(int attempt, int localRank, int stream) {
        if (logDir == null) {
            return null;
        }
        int toFile = redirects.getOrDefault(localRank, redirectAll) | tee.getOrDefault(localRank, teeAll);
        if ((toFile & stream) == 0) {
            return null;
        }
        return logDir.resolve("attempt_" + attempt).resolve(Integer.toString(localRank))
                .resolve(stream == OUT ? "stdout.log" : "stderr.log");
    }
}
