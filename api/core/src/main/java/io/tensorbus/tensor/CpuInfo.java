package io.tensorbus.tensor;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Set;
import jdk.incubator.vector.FloatVector;

/**
 * The CPU the kernels run on, probed once at start from Linux's {@code /proc/cpuinfo} and
 * {@code /sys/devices/system/cpu/cpu0/cache}: who made it, which model, its cache sizes and the vector features
 * that matter to the kernels. GEMM blocking is sized from the caches, {@code tensorbus info} prints it, and every
 * benchmark run names it, since the same kernel can win on one CPU kind and lose on another. Elsewhere than
 * Linux the fields the JDK cannot tell are "unknown" or 0.
 *
 * @param vendor the vendor id, such as {@code GenuineIntel} or {@code AuthenticAMD}
 * @param model the model name, such as {@code AMD EPYC 9R14}
 * @param family the CPU family number (0 when unknown)
 * @param modelNumber the model number within the family (0 when unknown)
 * @param cores the processors this JVM may use
 * @param l1dBytes the level-1 data cache of one core, in bytes (0 when unknown)
 * @param l2Bytes the level-2 cache of one core, in bytes (0 when unknown)
 * @param l3Bytes the level-3 cache of one instance, in bytes (0 when unknown)
 * @param vectorBits the width of the Vector API's preferred species, in bits
 * @param features the kernel-relevant features present, in {@link #KNOWN_FEATURES} order
 */
public record CpuInfo(String vendor, String model, int family, int modelNumber, int cores, long l1dBytes,
        long l2Bytes, long l3Bytes, int vectorBits, Set<String> features) {

    /** The {@code /proc/cpuinfo} flags that tensorbus looks for, as Linux names them. */
    public static final List<String> KNOWN_FEATURES = List.of("fma", "avx2", "avx512f", "avx512bw", "avx512vl",
            "avx512_vnni", "avx512_bf16", "avx512_fp16", "amx_tile", "amx_bf16");

    private static final CpuInfo CURRENT = probe(Path.of("/proc/cpuinfo"),
            Path.of("/sys/devices/system/cpu/cpu0/cache"),
            Runtime.getRuntime().availableProcessors(), FloatVector.SPECIES_PREFERRED.vectorBitSize());

    /**
     * Checks the names and copies {@code features} so that the record stays immutable.
     *
     * @throws NullPointerException when {@code vendor}, {@code model} or {@code features} is null
     */
    public CpuInfo {
        Objects.requireNonNull(vendor, "vendor");
        Objects.requireNonNull(model, "model");
        features = Set.copyOf(Objects.requireNonNull(features, "features"));
    }

    /** The CPU this JVM runs on, probed once. */
    public static CpuInfo current() {
        return CURRENT;
    }

    /** True when the CPU has {@code feature}, a {@code /proc/cpuinfo} flag such as {@code avx512f}. */
    public boolean has(String feature) {
        return features.contains(feature);
    }

    /**
     * The widest instruction set the kernels use here, as PyTorch's {@code torch.backends.cpu.get_cpu_capability()}
     * names it: {@code AVX512}, {@code AVX2} or {@code DEFAULT}.
     */
    public String capability() {
        if (vectorBits >= 512) {
            return "AVX512";
        }
        return vectorBits >= 256 ? "AVX2" : "DEFAULT";
    }

    /** One line for people: model, vendor, family and model number, cores, caches and features. */
    public String describe() {
        return String.format(Locale.ROOT,
                "%s (%s family %d model %d), %d core(s), L1d %s, L2 %s per core, L3 %s, %s: %s",
                model, vendor, family, modelNumber, cores, size(l1dBytes), size(l2Bytes), size(l3Bytes), capability(),
                features.isEmpty() ? "no vector features found" : String.join(" ", orderedFeatures()));
    }

    private List<String> orderedFeatures() {
        return KNOWN_FEATURES.stream().filter(features::contains).toList();
    }

    private static String size(long bytes) {
        if (bytes <= 0) {
            return "unknown";
        }
        return bytes >= 1 << 20 && bytes % (1 << 20) == 0 ? bytes / (1 << 20) + " MiB" : bytes / 1024 + " KiB";
    }

    /**
     * Reads the CPU from {@code cpuinfo} (a {@code /proc/cpuinfo}) and {@code caches} (a
     * {@code /sys/devices/system/cpu/cpu0/cache}); what cannot be read stays unknown.
     */
    static CpuInfo probe(Path cpuinfo, Path caches, int cores, int vectorBits) {
        String vendor = "unknown";
        String model = System.getProperty("os.arch", "unknown");
        int family = 0;
        int modelNumber = 0;
        Set<String> features = new LinkedHashSet<>();
        for (String line : lines(cpuinfo)) {
            int colon = line.indexOf(':');
            if (colon < 0) {
                if (line.isBlank() && !vendor.equals("unknown")) {
                    break; // the first processor is enough: they are alike on the machines we run on
                }
                continue;
            }
            String key = line.substring(0, colon).trim();
            String value = line.substring(colon + 1).trim();
            switch (key) {
                case "vendor_id" -> vendor = value;
                case "model name" -> model = value;
                case "cpu family" -> family = parseInt(value);
                case "model" -> modelNumber = parseInt(value);
                case "flags" -> {
                    Set<String> flags = Set.of(value.split("\\s+"));
                    KNOWN_FEATURES.stream().filter(flags::contains).forEach(features::add);
                }
                default -> {
                }
            }
        }
        return new CpuInfo(vendor, model, family, modelNumber, cores, cache(caches, 1, "Data"),
                cache(caches, 2, "Unified"), cache(caches, 3, "Unified"), vectorBits, features);
    }

    /** The size of the cache of {@code level} and {@code type} among {@code dir}'s index folders, or 0. */
    private static long cache(Path dir, int level, String type) {
        for (int i = 0; i < 8; i++) {
            Path index = dir.resolve("index" + i);
            List<String> lv = lines(index.resolve("level"));
            List<String> ty = lines(index.resolve("type"));
            List<String> sz = lines(index.resolve("size"));
            if (lv.isEmpty() || ty.isEmpty() || sz.isEmpty()) {
                continue;
            }
            if (parseInt(lv.getFirst().trim()) == level && ty.getFirst().trim().equals(type)) {
                return parseSize(sz.getFirst().trim());
            }
        }
        return 0;
    }

    /** A sysfs cache size such as {@code 32K}, {@code 1024K} or {@code 2M}, in bytes; 0 when unreadable. */
    static long parseSize(String text) {
        if (text.isEmpty()) {
            return 0;
        }
        char unit = Character.toUpperCase(text.charAt(text.length() - 1));
        long scale = switch (unit) {
            case 'K' -> 1L << 10;
            case 'M' -> 1L << 20;
            case 'G' -> 1L << 30;
            default -> 1;
        };
        String digits = Character.isDigit(unit) ? text : text.substring(0, text.length() - 1);
        return Math.max(0, parseInt(digits)) * scale;
    }

    private static int parseInt(String s) {
        try {
            return Integer.parseInt(s.trim());
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    private static List<String> lines(Path file) {
        try {
            return Files.readAllLines(file);
        } catch (IOException | SecurityException e) {
            return List.of();
        }
    }
}
