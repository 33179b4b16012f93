package io.tensorbus.it;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A strict reader of Prometheus's text exposition format 0.0.4, for tests of what tensorbus serves: every line must
 * be a {@code # HELP}, a {@code # TYPE} or a sample, names and labels as the format defines them, values as Go's
 * floats, and every sample must belong to a family whose {@code # TYPE} came before it (with the {@code _bucket},
 * {@code _sum}, {@code _count} and {@code _created} series of histograms and summaries).
 */
final class PrometheusText {
    private static final String NAME = "[a-zA-Z_:][a-zA-Z0-9_:]*";
    private static final String LABEL = "[a-zA-Z_][a-zA-Z0-9_]*=\"(?:[^\"\\\\\\n]|\\\\[\\\\\"n])*\"";
    private static final String VALUE = "[+-]?(?:[0-9]+(?:\\.[0-9]*)?|\\.[0-9]+)(?:[eE][+-]?[0-9]+)?|[+-]?Inf|NaN";
    private static final Pattern SAMPLE = Pattern.compile("(" + NAME + ")(?:\\{((?:" + LABEL + ")(?:," + LABEL
            + ")*,?)?\\})? (" + VALUE + ")(?: -?[0-9]+)?");
    private static final Pattern ONE_LABEL = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)=\"((?:[^\"\\\\]|\\\\.)*)\"");
    private static final Pattern TYPE = Pattern.compile("# TYPE (" + NAME + ") (counter|gauge|histogram|summary"
            + "|untyped)");
    private static final Pattern HELP = Pattern.compile("# HELP (" + NAME + ") .*");

    /** One sample: its series name, labels and value. */
    record Sample(String name, Map<String, String> labels, double value) {
    }

    private PrometheusText() {
    }

    /**
     * Reads {@code text} whole.
     *
     * @throws IllegalArgumentException naming the first line that breaks the format
     */
    static List<Sample> parse(String text) {
        Map<String, String> types = new HashMap<>();
        List<Sample> samples = new ArrayList<>();
        int n = 0;
        for (String line : text.split("\n", -1)) {
            n++;
            if (line.isEmpty()) {
                continue;
            }
            Matcher t = TYPE.matcher(line);
            if (t.matches()) {
                if (types.put(t.group(1), t.group(2)) != null) {
                    throw new IllegalArgumentException("line " + n + ": a second TYPE of " + t.group(1));
                }
            } else if (!HELP.matcher(line).matches()) {
                samples.add(sample(line, n, types));
            }
        }
        return samples;
    }

    private static Sample sample(String line, int n, Map<String, String> types) {
        Matcher m = SAMPLE.matcher(line);
        if (!m.matches()) {
            throw new IllegalArgumentException("line " + n + " is not a sample: " + line);
        }
        String name = m.group(1);
        if (family(name, types) == null) {
            throw new IllegalArgumentException("line " + n + ": " + name + " has no TYPE before it");
        }
        Map<String, String> labels = new LinkedHashMap<>();
        if (m.group(2) != null) {
            Matcher l = ONE_LABEL.matcher(m.group(2));
            while (l.find()) {
                if (labels.put(l.group(1), l.group(2)) != null) {
                    throw new IllegalArgumentException("line " + n + ": label " + l.group(1) + " twice");
                }
            }
        }
        String v = m.group(3);
        double value = v.endsWith("Inf") ? (v.startsWith("-") ? Double.NEGATIVE_INFINITY : Double.POSITIVE_INFINITY)
                : Double.parseDouble(v);
        return new Sample(name, labels, value);
    }

    /** The family of series {@code name}: itself, or the histogram or summary it is a part of. */
    private static String family(String name, Map<String, String> types) {
        if (types.containsKey(name)) {
            return name;
        }
        for (String suffix : List.of("_bucket", "_sum", "_count", "_created", "_total")) {
            if (name.endsWith(suffix) && types.containsKey(name.substring(0, name.length() - suffix.length()))) {
                return name.substring(0, name.length() - suffix.length());
            }
        }
        return null;
    }
}
