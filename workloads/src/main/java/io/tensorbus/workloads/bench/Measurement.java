package io.tensorbus.workloads.bench;

import io.tensorbus.tensor.CpuInfo;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;

/**
 * One benchmark result in the command line's format, {@code SUITE NAME key=value ...} (for example
 * {@code tensor sgemm threads=1 n=1024 gflops=171.3}), so that a script can compare it with the PyTorch
 * anchor measured in the same sitting. Values are numbers or text (quoted in the line when it holds spaces, and
 * always in JSON), kept in the order they were added.
 */
public final class Measurement {
    private final String suite;
    private final String name;
    private final List<Field> fields = new ArrayList<>();

    private record Field(String key, String value, boolean number) {
    }

    /**
     * Starts a measurement.
     *
     * @param suite the suite, such as {@code tensor}
     * @param name the measurement's name within the suite, such as {@code sgemm}
     */
    public Measurement(String suite, String name) {
        this.suite = Objects.requireNonNull(suite, "suite");
        this.name = Objects.requireNonNull(name, "name");
    }

    /**
     * Adds a text value, such as {@code backend=tcp} or {@code model="AMD EPYC"}.
     *
     * @throws IllegalArgumentException when {@code value} is null, empty or holds a quote or a line break
     */
    public Measurement with(String key, String value) {
        if (value == null || value.isBlank() || value.indexOf('"') >= 0 || value.indexOf('\n') >= 0) {
            throw new IllegalArgumentException(key + " must be non-empty text without quotes or line breaks, got '"
                    + value + "'");
        }
        fields.add(new Field(key, value, false));
        return this;
    }

    /** Adds {@code key=value}. */
    public Measurement with(String key, long value) {
        fields.add(new Field(key, Long.toString(value), true));
        return this;
    }

    /** Adds a value with {@code decimals} digits after the point, such as {@code gflops=171.3}. */
    public Measurement with(String key, double value, int decimals) {
        if (!Double.isFinite(value)) {
            throw new IllegalArgumentException(key + " must be a finite number, got " + value);
        }
        fields.add(new Field(key, String.format(Locale.ROOT, "%." + decimals + "f", value), true));
        return this;
    }

    /** The measurement's name within its suite, such as {@code sgemm}. */
    public String name() {
        return name;
    }

    /**
     * The number under {@code key}.
     *
     * @throws IllegalArgumentException when there is no such key or its value is text
     */
    public double number(String key) {
        for (Field f : fields) {
            if (f.key().equals(key) && f.number()) {
                return Double.parseDouble(f.value());
            }
        }
        throw new IllegalArgumentException("no number " + key + " in '" + line() + "'");
    }

    /** The measurement as one line: {@code SUITE NAME key=value key=value ...}. */
    public String line() {
        StringBuilder sb = new StringBuilder(suite).append(' ').append(name);
        for (Field f : fields) {
            boolean oneWord = f.number() || f.value().chars().noneMatch(Character::isWhitespace);
            sb.append(' ').append(f.key()).append('=').append(oneWord ? f.value() : '"' + f.value() + '"');
        }
        return sb.toString();
    }

    /** The measurement as a JSON object: {@code {"suite": ..., "name": ..., "key": number or "text", ...}}. */
    public String json() {
        StringBuilder sb = new StringBuilder("{\"suite\": ").append(quote(suite))
                .append(", \"name\": ").append(quote(name));
        for (Field f : fields) {
            sb.append(", ").append(quote(f.key())).append(": ").append(f.number() ? f.value() : quote(f.value()));
        }
        return sb.append('}').toString();
    }

    /**
     * The first record of every benchmark run: the CPU it ran on (the same kernel can win on one CPU kind and lose
     * on another), as {@code machine cpu model="..." vendor=... family=N model_number=N cores=N l2_kib=N
     * capability=AVX512}.
     */
    public static Measurement machine(CpuInfo cpu) {
        return new Measurement("machine", "cpu").with("model", cpu.model()).with("vendor", cpu.vendor())
                .with("family", cpu.family()).with("model_number", cpu.modelNumber()).with("cores", cpu.cores())
                .with("l2_kib", cpu.l2Bytes() / 1024).with("l3_kib", cpu.l3Bytes() / 1024)
                .with("capability", cpu.capability());
    }

    /** A JSON array of measurements, one per line. */
    public static String jsonArray(List<Measurement> all) {
        StringBuilder sb = new StringBuilder("[\n");
        for (int i = 0; i < all.size(); i++) {
            sb.append("  ").append(all.get(i).json()).append(i + 1 < all.size() ? ",\n" : "\n");
        }
        return sb.append("]\n").toString();
    }

    private static String quote(String s) {
        StringBuilder sb = new StringBuilder("\"");
        for (char ch : s.toCharArray()) {
            switch (ch) {
                case '"' -> sb.append("\\\"");
                case '\\' -> sb.append("\\\\");
                default -> {
                    if (ch < 0x20) {
                        sb.append(String.format(Locale.ROOT, "\\u%04x", (int) ch));
                    } else {
                        sb.append(ch);
                    }
                }
            }
        }
        return sb.append('"').toString();
    }

    @Override
    public String toString() {
        return line();
    }
}
