package io.tensorbus.it;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Keeps README.md and the design documents under docs/ true to the code: every Java name they write in backticks
 * ({@code Type}, {@code @Annotation}, {@code Type.member}, {@code Type#member}, {@code Type.member(ParamType, ...)})
 * names a type of this repository, of the JDK or of a library it uses, or of PyTorch's (a listed name); a member of
 * one of this repository's types is declared in it, and parameter types, when given, are those of a declaration.
 * docs/pytorch-parity.md has its own, stricter test ({@link PytorchParityDocTest}). Nothing in the docs, README or
 * the main sources refers to files outside the repository.
 */
class DocsNamesTest {
    private static final Path ROOT = Path.of("..");
    /** The workspace folder beside the repository, spelled in parts so that this file does not name it. */
    private static final String OUTSIDE = String.join("/", "..", "shared");
    private static final Pattern SPAN = Pattern.compile("`([^`\n]+)`");
    /** {@code @Type}, {@code Type<...>}, {@code Type.member}, {@code Type#member(params)}. */
    private static final Pattern JAVA = Pattern.compile(
            "(@?)([A-Z][A-Za-z0-9]*)(?:<[^`]*>)?(?:[.#]([a-z][A-Za-z0-9]*)(?:\\((.*)\\))?)?");
    private static final Pattern TYPE_DECLARATION = Pattern.compile(
            "\\b(?:class|interface|enum|record)\\s+([A-Z]\\w*)(?:<[^{]*?>)?(?:\\s+extends\\s+([A-Z]\\w*))?");
    private static final Pattern ANNOTATION_DECLARATION = Pattern.compile("@interface\\s+([A-Z]\\w*)");
    private static final Pattern MEMBER_DECLARATION = Pattern.compile(
            "(?m)^\\s+(?:[\\w<>\\[\\],.?@ ]+\\s+)?([a-zA-Z_]\\w*)\\s*(?:\\(|=|;|,)");
    private static final Set<String> PRIMITIVES = Set.of("int", "long", "double", "float", "boolean", "byte",
            "short", "char");
    /** Packages whose public types the docs may name by their simple names. */
    private static final List<String> LIBRARY_PACKAGES = List.of("java.lang", "java.lang.annotation",
            "java.lang.foreign", "java.lang.management", "java.lang.ref", "java.util", "java.util.concurrent",
            "java.util.function", "java.nio", "java.net", "java.io", "java.time", "com.sun.management",
            "jdk.incubator.vector", "io.netty.buffer", "io.netty.channel", "io.netty.handler.ssl",
            "io.vertx.core", "io.vertx.core.net", "io.vertx.core.internal.net", "io.vertx.core.buffer",
            "io.vertx.launcher.application", "io.smallrye.mutiny", "jcuda", "jcuda.driver", "jcuda.runtime",
            "org.jocl", "org.junit.jupiter.api", "com.hazelcast.core", "com.hazelcast.config",
            "io.micrometer.core.instrument", "io.micrometer.core.instrument.binder",
            "io.micrometer.core.instrument.composite", "io.micrometer.prometheusmetrics", "io.opentelemetry.api");
    /** PyTorch's (and the JDK's internal) names the docs compare with; none is a type of this repository. */
    private static final Set<String> FOREIGN = Set.of("TCPStore", "Work", "DistError", "DistBackendError",
            "DistNetworkError", "DistStoreError", "TensorPipeRpcBackendOptions", "SplitPoint", "PipelineStage",
            "ScheduleGPipe", "Schedule1F1B", "ScheduleInterleaved1F1B", "ScheduleLoopedBFS",
            "ScheduleInterleavedZeroBubble", "FullyShardedDataParallel", "DeviceMesh", "ColwiseParallel",
            "RowwiseParallel", "DistAutogradContainer", "SendRpcBackward", "RecvRpcBackward", "PropagateGradientsReq",
            "CleanupAutogradContextReq", "ProcessGroupNCCL", "ProcessGroupGloo", "TensorPipeAgent", "Reducer",
            "SegmentFactories", "Bits", "VectorSupport", "TBSH", "K");

    private static final Set<String> TYPES = new HashSet<>();
    private static final Set<String> ANNOTATIONS = new HashSet<>();
    /** The source text of the files that declare a type, by type name. */
    private static final Map<String, List<String>> SOURCES = new HashMap<>();
    /** The superclass a type of this repository extends, by type name: members inherited count as the type's. */
    private static final Map<String, String> SUPERCLASS = new HashMap<>();

    @BeforeAll
    static void readSources() throws IOException {
        try (Stream<Path> files = Files.walk(ROOT)) {
            for (Path f : files.filter(DocsNamesTest::javaSource).toList()) {
                String text = Files.readString(f);
                Matcher t = TYPE_DECLARATION.matcher(text);
                while (t.find()) {
                    TYPES.add(t.group(1));
                    SOURCES.computeIfAbsent(t.group(1), k -> new ArrayList<>()).add(text);
                    if (t.group(2) != null) {
                        SUPERCLASS.put(t.group(1), t.group(2));
                    }
                }
                Matcher a = ANNOTATION_DECLARATION.matcher(text);
                while (a.find()) {
                    ANNOTATIONS.add(a.group(1));
                }
            }
        }
        assertTrue(TYPES.size() > 300, "found only " + TYPES.size() + " types under " + ROOT.toAbsolutePath());
    }

    private static boolean javaSource(Path p) {
        String s = p.toString();
        return s.endsWith(".java") && s.contains("/src/") && !s.contains("/target/") && !s.contains("/.git/");
    }

    private static List<Path> docs() throws IOException {
        List<Path> docs = new ArrayList<>(List.of(ROOT.resolve("README.md")));
        try (Stream<Path> files = Files.list(ROOT.resolve("docs"))) {
            files.filter(f -> f.toString().endsWith(".md") && !f.endsWith("pytorch-parity.md")).sorted()
                    .forEach(docs::add);
        }
        return docs;
    }

    @Test
    void everyJavaNameTheDocsWriteExists() throws IOException {
        List<String> wrong = new ArrayList<>();
        int checked = 0;
        for (Path doc : docs()) {
            Matcher span = SPAN.matcher(Files.readString(doc));
            while (span.find()) {
                Matcher m = JAVA.matcher(span.group(1));
                if (!m.matches() || !m.group(2).chars().anyMatch(Character::isLowerCase)) {
                    continue;
                }
                checked++;
                String problem = check(m.group(1).equals("@"), m.group(2), m.group(3), m.group(4));
                if (problem != null) {
                    wrong.add(ROOT.relativize(doc) + ": `" + span.group(1) + "`: " + problem);
                }
            }
        }
        assertTrue(checked > 200, "checked only " + checked + " names");
        assertTrue(wrong.isEmpty(), "names in the docs that the code does not have:\n" + String.join("\n", wrong));
    }

    @Test
    void nothingRefersToFilesOutsideTheRepository() throws IOException {
        List<String> outside = new ArrayList<>();
        List<Path> files = new ArrayList<>(docs());
        files.add(ROOT.resolve("docs/pytorch-parity.md"));
        try (Stream<Path> sources = Files.walk(ROOT)) {
            sources.filter(p -> javaSource(p) && p.toString().contains("/src/main/")).forEach(files::add);
        }
        for (Path f : files) {
            List<String> lines = Files.readAllLines(f);
            for (int i = 0; i < lines.size(); i++) {
                if (lines.get(i).contains(OUTSIDE)) {
                    outside.add(ROOT.relativize(f) + ":" + (i + 1) + ": " + lines.get(i).strip());
                }
            }
        }
        assertTrue(outside.isEmpty(), "references to the workspace outside the repository:\n"
                + String.join("\n", outside));
    }

    /** Null when the name is right; else what is wrong. */
    private static String check(boolean annotation, String type, String member, String params) {
        if (annotation) {
            return ANNOTATIONS.contains(type) || library(type) ? null : "no such annotation";
        }
        if (!TYPES.contains(type)) {
            return library(type) || FOREIGN.contains(type) ? null : "no such type here, in the JDK, in a library"
                    + " or in PyTorch's list (DocsNamesTest.FOREIGN)";
        }
        if (member == null) {
            return null;
        }
        List<String> sources = new ArrayList<>(SOURCES.get(type));
        String up = SUPERCLASS.get(type);
        for (int depth = 0; up != null && SOURCES.containsKey(up) && depth < 8; depth++) {
            sources.addAll(SOURCES.get(up));
            up = SUPERCLASS.get(up);
        }
        if (sources.stream().noneMatch(s -> declares(s, member))) {
            return type + " declares no " + member;
        }
        List<String> wanted = params == null ? null : types(params);
        if (wanted == null || wanted.isEmpty()) {
            return null;
        }
        Pattern declaration = Pattern.compile("\\b" + member + "\\s*\\(([^)]*)\\)\\s*(?:throws[^{;]*)?[{;]");
        for (String s : sources) {
            Matcher d = declaration.matcher(s);
            while (d.find()) {
                if (wanted.equals(parameterTypes(d.group(1)))) {
                    return null;
                }
            }
        }
        return type + "." + member + " takes no (" + String.join(", ", wanted) + ")";
    }

    private static boolean declares(String source, String member) {
        Matcher m = MEMBER_DECLARATION.matcher(source);
        while (m.find()) {
            if (m.group(1).equals(member)) {
                return true;
            }
        }
        return Pattern.compile("record\\s+\\w+\\s*\\([^)]*\\b" + member + "\\b").matcher(source).find();
    }

    /** The parameter types a doc gives, normalised; null when it gives names, not types. */
    private static List<String> types(String params) {
        List<String> out = new ArrayList<>();
        for (String p : splitTopLevel(params)) {
            String t = normalise(p);
            if (t.isEmpty()) {
                continue;
            }
            if (!PRIMITIVES.contains(t.replace("[]", "").replace("...", "")) && !Character.isUpperCase(t.charAt(0))
                    || t.contains(" ")) {
                return null;
            }
            out.add(t);
        }
        return out;
    }

    private static List<String> parameterTypes(String declared) {
        List<String> out = new ArrayList<>();
        for (String p : splitTopLevel(declared)) {
            String t = p.replaceAll("@\\w+\\s*", "").replace("final ", "").strip();
            int name = t.lastIndexOf(' ');
            if (name > 0) {
                out.add(normalise(t.substring(0, name)));
            }
        }
        return out;
    }

    /** Without generics and blanks: {@code List<Object>} is {@code List}. */
    private static String normalise(String type) {
        return type.replaceAll("<.*>", "").strip();
    }

    private static List<String> splitTopLevel(String params) {
        List<String> out = new ArrayList<>();
        int depth = 0;
        StringBuilder cur = new StringBuilder();
        for (char c : params.toCharArray()) {
            depth += c == '<' ? 1 : c == '>' ? -1 : 0;
            if (c == ',' && depth == 0) {
                out.add(cur.toString());
                cur.setLength(0);
            } else {
                cur.append(c);
            }
        }
        if (!cur.toString().isBlank()) {
            out.add(cur.toString());
        }
        return out;
    }

    private static boolean library(String simpleName) {
        for (String pkg : LIBRARY_PACKAGES) {
            try {
                Class.forName(pkg + "." + simpleName, false, DocsNamesTest.class.getClassLoader());
                return true;
            } catch (ClassNotFoundException | LinkageError e) {
                // Not in this package.
            }
        }
        return false;
    }
}
