package io.tensorbus.it;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Keeps docs/design.md true to the code's packages: it names every package of the main sources, and every
 * package it names exists. A name ending in {@code .*} covers the packages below it. The Java names it writes
 * are checked by {@link DocsNamesTest}, as those of the other docs.
 */
class DesignDocTest {
    private static final Path ROOT = Path.of("..");
    private static final Pattern PACKAGE = Pattern.compile("(?m)^package (io\\.tensorbus[\\w.]*);");
    private static final Pattern NAMED = Pattern.compile("`(io\\.tensorbus(?:\\.[a-z]\\w*)*(?:\\.\\*)?)`");

    @Test
    void theDesignNamesEveryPackageAndOnlyPackagesThatExist() throws IOException {
        Set<String> packages = mainPackages();
        Set<String> named = new TreeSet<>();
        Matcher m = NAMED.matcher(Files.readString(ROOT.resolve("docs/design.md")));
        while (m.find()) {
            named.add(m.group(1));
        }
        Set<String> unnamed = new TreeSet<>();
        for (String p : packages) {
            if (named.stream().noneMatch(n -> n.equals(p) || n.endsWith(".*") && p.startsWith(n.replace("*", "")))) {
                unnamed.add(p);
            }
        }
        Set<String> missing = new TreeSet<>();
        for (String n : named) {
            String prefix = n.replace(".*", ".");
            if (!packages.contains(n) && packages.stream().noneMatch(p -> n.endsWith(".*") && p.startsWith(prefix))) {
                missing.add(n);
            }
        }
        assertTrue(packages.size() > 30, "found only " + packages.size() + " packages");
        assertTrue(unnamed.isEmpty(), "packages docs/design.md does not name: " + unnamed);
        assertTrue(missing.isEmpty(), "packages docs/design.md names that the code does not have: " + missing);
    }

    private static Set<String> mainPackages() throws IOException {
        Set<String> packages = new TreeSet<>();
        try (Stream<Path> files = Files.walk(ROOT)) {
            for (Path f : files.filter(DesignDocTest::mainSource).toList()) {
                Matcher m = PACKAGE.matcher(Files.readString(f));
                if (m.find()) {
                    packages.add(m.group(1));
                }
            }
        }
        return packages;
    }

    private static boolean mainSource(Path p) {
        String s = p.toString();
        return s.endsWith(".java") && s.contains("/src/main/java/") && !s.contains("/target/")
                && !s.contains("/integration-tests/");
    }
}
