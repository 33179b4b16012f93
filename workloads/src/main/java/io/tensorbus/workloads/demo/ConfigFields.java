package io.tensorbus.workloads.demo;

import io.tensorbus.Device;
import io.vertx.core.json.JsonObject;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * Reads the typed fields of a workload verticle's JSON config, falling back to environment variables and
 * defaults, with error messages that name the field and what it allows; shared by the workloads' configs.
 */
public final class ConfigFields {
    private final JsonObject json;
    private final Map<String, String> env;

    /**
     * A reader of {@code json} with {@code env} for fallbacks.
     *
     * @param allowed every field the config may have
     * @throws IllegalArgumentException naming a field not in {@code allowed}, and listing those
     */
    public ConfigFields(JsonObject json, Map<String, String> env, List<String> allowed) {
        this.json = json;
        this.env = env;
        for (String key : json.fieldNames()) {
            if (!allowed.contains(key)) {
                throw new IllegalArgumentException("unknown config field '" + key + "'; allowed fields: "
                        + String.join(", ", allowed));
            }
        }
    }

    /**
     * The compute threads of one process: the cores shared among this node's processes
     * ({@code LOCAL_WORLD_SIZE}), as torchrun's one thread per process when they would compete; 0 (leave as is)
     * outside a launched job.
     *
     * @throws IllegalArgumentException when {@code LOCAL_WORLD_SIZE} is not a whole number
     */
    public static int defaultThreads(Map<String, String> env) {
        String local = env.get("LOCAL_WORLD_SIZE");
        if (local == null) {
            return 0;
        }
        try {
            int processes = Math.max(1, Integer.parseInt(local.trim()));
            return Math.max(1, Runtime.getRuntime().availableProcessors() / processes);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("LOCAL_WORLD_SIZE='" + local + "' (environment) is not a whole number");
        }
    }

    /**
     * The config fields that give {@code training} (all are written, so that the config says what runs).
     */
    public static JsonObject trainingJson(FashionMnistTraining.Options training) {
        JsonObject json = new JsonObject().put("epochs", training.epochs()).put("batchSize", training.batchSize())
                .put("lr", training.lr()).put("momentum", training.momentum()).put("seed", training.seed())
                .put("limit", training.trainLimit());
        if (training.dataDir() != null) {
            json.put("dataDir", training.dataDir().toString());
        }
        if (!training.device().isCpu()) {
            json.put("device", training.device().toString());
        }
        return json;
    }

    /**
     * The variable {@code var} of {@code env} as a whole number in {@code [min, max]}, or {@code dflt} when unset.
     *
     * @throws IllegalArgumentException naming the variable and the range allowed
     */
    public static int environmentInteger(Map<String, String> env, String var, int dflt, long min, long max) {
        String v = env.get(var);
        return v == null ? dflt : (int) parse(var + "='" + v + "' (environment)", v, min, max);
    }

    /**
     * The training fields ({@code epochs}, {@code dataDir}, {@code seed}, {@code batchSize}, {@code lr},
     * {@code momentum}, {@code limit}), with the local demo's defaults.
     */
    public FashionMnistTraining.Options training() {
        FashionMnistTraining.Options d = FashionMnistTraining.Options.defaults();
        String dir = text("dataDir", null);
        return new FashionMnistTraining.Options(integer("epochs", null, d.epochs(), 1, Integer.MAX_VALUE),
                dir == null ? null : Path.of(dir), wholeNumber("seed", d.seed(), Long.MIN_VALUE, Long.MAX_VALUE),
                integer("batchSize", null, d.batchSize(), 1, Integer.MAX_VALUE), real("lr", d.lr()),
                real("momentum", d.momentum()), integer("limit", null, d.trainLimit(), 0, Integer.MAX_VALUE),
                device(text("device", "cpu")));
    }

    private static Device device(String text) {
        try {
            return Device.parse(text);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("config field 'device': " + e.getMessage(), e);
        }
    }

    /**
     * An int field, else the variable {@code var} (when not null), else {@code dflt}; in {@code [min, max]}.
     *
     * @throws IllegalArgumentException naming the field or variable and the range allowed
     */
    public int integer(String key, String var, long dflt, long min, long max) {
        if (!json.containsKey(key) && var != null && env.get(var) != null) {
            return (int) parse(var + "='" + env.get(var) + "' (environment)", env.get(var), min, max);
        }
        return (int) wholeNumber(key, dflt, min, max);
    }

    /** A whole-number field, else {@code dflt}; in {@code [min, max]}. */
    public long wholeNumber(String key, long dflt, long min, long max) {
        Object v = json.getValue(key);
        if (v == null) {
            return dflt;
        }
        if (!(v instanceof Integer || v instanceof Long)) {
            throw new IllegalArgumentException(fieldMessage(key, v, wholeRange(min, max)));
        }
        long n = ((Number) v).longValue();
        if (n < min || n > max) {
            throw new IllegalArgumentException(fieldMessage(key, v, wholeRange(min, max)));
        }
        return n;
    }

    /** A finite number field &gt;= 0, else {@code dflt}. */
    public double real(String key, double dflt) {
        Object v = json.getValue(key);
        if (v == null) {
            return dflt;
        }
        if (!(v instanceof Number n) || !(n.doubleValue() >= 0) || Double.isInfinite(n.doubleValue())) {
            throw new IllegalArgumentException(fieldMessage(key, v, "a number >= 0"));
        }
        return n.doubleValue();
    }

    /** A non-blank string field, trimmed, else {@code dflt}. */
    public String text(String key, String dflt) {
        Object v = json.getValue(key);
        if (v == null) {
            return dflt;
        }
        if (!(v instanceof String s) || s.isBlank()) {
            throw new IllegalArgumentException(fieldMessage(key, v, "a non-empty string"));
        }
        return s.trim();
    }

    /** A string field, else the non-blank variable {@code var}, else {@code dflt}. */
    public String textOrEnv(String key, String var, String dflt) {
        String fromEnv = env.get(var);
        return text(key, fromEnv == null || fromEnv.isBlank() ? dflt : fromEnv.trim());
    }

    private static long parse(String what, String text, long min, long max) {
        long n;
        try {
            n = Long.parseLong(text.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(what + " must be " + wholeRange(min, max));
        }
        if (n < min || n > max) {
            throw new IllegalArgumentException(what + " must be " + wholeRange(min, max));
        }
        return n;
    }

    private static String wholeRange(long min, long max) {
        return max == Long.MAX_VALUE || max == Integer.MAX_VALUE ? "a whole number >= " + min
                : "a whole number from " + min + " to " + max;
    }

    private static String fieldMessage(String key, Object value, String allowed) {
        String shown = value instanceof String s ? "\"" + s + "\"" : String.valueOf(value);
        return "config field '" + key + "' must be " + allowed + ", got " + shown;
    }
}
