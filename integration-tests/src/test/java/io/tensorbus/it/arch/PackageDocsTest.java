package io.tensorbus.it.arch;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Every package of every module's main sources says what it is and which threads run its code, in a
 * {@code package-info.java} with a "Threads:" paragraph: where a class may block, compute or must stay on one
 * event loop is written down for each package, not left to a few classes.
 */
class PackageDocsTest {
    /** The repository: surefire runs this module's tests in {@code integration-tests}. */
    private static final Path ROOT = Path.of(System.getProperty("user.dir")).toAbsolutePath().getParent();

    @Test
    void everyPackageSaysWhichThreadsRunIt() throws IOException {
        List<Path> packages = mainPackages();
        assertTrue(packages.size() > 25, "found only " + packages + " under " + ROOT);
        List<String> undocumented = new ArrayList<>();
        for (Path dir : packages) {
            Path info = dir.resolve("package-info.java");
            if (!Files.isRegularFile(info) || !Files.readString(info).contains("Threads:")) {
                undocumented.add(ROOT.relativize(dir).toString());
            }
        }
        assertTrue(undocumented.isEmpty(), "packages without a package-info that says \"Threads:\": " + undocumented);
    }

    /** Directories under some {@code src/main/java} that hold Java classes. */
    private static List<Path> mainPackages() throws IOException {
        try (Stream<Path> files = Files.walk(ROOT)) {
            return files.filter(p -> p.toString().endsWith(".java") && !p.endsWith("package-info.java"))
                    .filter(p -> p.toString().contains("/src/main/java/") && !p.toString().contains("/target/"))
                    .map(Path::getParent).distinct().sorted().toList();
        }
    }
}
