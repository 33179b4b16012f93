package io.tensorbus.it;

import io.tensorbus.workloads.cli.LaunchOptions;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Keeps {@code docs/pytorch-parity.md} true: every Java name it writes in backticks ({@code io.tensorbus.pkg.Class}
 * or {@code io.tensorbus.pkg.Class#member}) is a public class with a public method, field, enum constant or record
 * component of that name, and every launcher option it lists ({@code --name}) is one {@code tensorbus launch}
 * accepts.
 */
class PytorchParityDocTest {
    private static final Pattern JAVA_NAME = Pattern.compile("`(io\\.tensorbus\\.[A-Za-z0-9_.$]+)(?:#(\\w+))?`");
    private static final Pattern OPTION = Pattern.compile("`(--[a-z][a-z-]*)`");

    private static String doc() throws Exception {
        Path p = Path.of("..", "docs", "pytorch-parity.md");
        assertTrue(Files.exists(p), "docs/pytorch-parity.md is missing (" + p.toAbsolutePath() + ")");
        return Files.readString(p);
    }

    @Test
    void everyJavaNameTheParityTableGivesExists() throws Exception {
        String doc = doc();
        Matcher m = JAVA_NAME.matcher(doc);
        List<String> missing = new ArrayList<>();
        int checked = 0;
        while (m.find()) {
            checked++;
            String problem = check(m.group(1), m.group(2));
            if (problem != null) {
                missing.add(m.group() + ": " + problem);
            }
        }
        assertTrue(checked >= 100, "the table names only " + checked + " Java names");
        assertTrue(missing.isEmpty(), "names in docs/pytorch-parity.md that do not exist:\n"
                + String.join("\n", missing));
    }

    @Test
    void everyLauncherOptionItListsIsAccepted() throws Exception {
        String doc = doc();
        int start = doc.indexOf("## torchrun");
        assertTrue(start >= 0, "no '## torchrun' section");
        int end = doc.indexOf("\n## ", start + 1);
        List<String> unknown = new ArrayList<>();
        int options = 0;
        String usage = LaunchOptions.usage();
        for (String row : (end < 0 ? doc.substring(start) : doc.substring(start, end)).split("\n")) {
            String[] cells = row.split("\\|");
            if (!row.startsWith("|") || cells.length < 3) {
                continue;
            }
            // The second column is tensorbus launch's; the first is torchrun's.
            Matcher m = OPTION.matcher(cells[2]);
            while (m.find()) {
                options++;
                String option = m.group(1);
                if (!usage.contains(option + "=") && !usage.contains(option + ",") && !usage.contains(option + " ")) {
                    unknown.add(option);
                }
            }
        }
        assertTrue(options >= 10, "only " + options + " launcher options listed");
        assertTrue(unknown.isEmpty(), "options the launcher does not take: " + unknown);
    }

    /** Null when {@code className} (dots, nested classes by dots too) has a public {@code member}; else why not. */
    private static String check(String className, String member) {
        Class<?> c = load(className);
        if (c == null) {
            return "no such class";
        }
        if (!Modifier.isPublic(c.getModifiers())) {
            return "not public";
        }
        if (member == null) {
            return null;
        }
        boolean found = Arrays.stream(c.getMethods()).map(Method::getName).anyMatch(member::equals)
                || Arrays.stream(c.getFields()).map(Field::getName).anyMatch(member::equals)
                || Arrays.stream(c.getClasses()).map(Class::getSimpleName).anyMatch(member::equals);
        return found ? null : "no public member " + member;
    }

    private static Class<?> load(String name) {
        String binary = name;
        while (true) {
            try {
                return Class.forName(binary, false, PytorchParityDocTest.class.getClassLoader());
            } catch (ClassNotFoundException e) {
                int dot = binary.lastIndexOf('.');
                // io.tensorbus.pkg.Outer.Inner is Outer$Inner
                if (dot < 0 || !Character.isUpperCase(binary.charAt(binary.lastIndexOf('.', dot - 1) + 1))) {
                    return null;
                }
                binary = binary.substring(0, dot) + "$" + binary.substring(dot + 1);
            }
        }
    }
}
