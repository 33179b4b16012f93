package io.tensorbus.it;

import io.tensorbus.workloads.cli.Main;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.jar.Attributes;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code tensorbus launch} runs a user's own program that is not part of tensorbus: a class compiled here
 * into a directory of its own, given with {@code --classpath} or {@code CLASSPATH}, and the same class in an
 * executable jar given with {@code -jar}.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class UserProgramLaunchTest {
    private static final String MAIN = "com.example.user.UserTrain";
    private static final String SOURCE = """
            package com.example.user;

            import io.tensorbus.distributed.Distributed;
            import io.tensorbus.distributed.InitOptions;
            import io.tensorbus.distributed.ProcessGroup;
            import io.tensorbus.tensor.Tensor;

            public class UserTrain {
                public static void main(String[] args) {
                    ProcessGroup pg = Distributed.initProcessGroup(InitOptions.builder().build()).await();
                    Tensor t = Tensor.ones(3);
                    pg.allReduce(t).await();
                    boolean opened = Object.class.getModule().isOpen("java.lang", UserTrain.class.getModule());
                    System.out.println("USER rank " + pg.rank() + " of " + pg.size() + " sum=" + t.getDouble(0)
                            + " args=" + String.join(",", args) + " java.lang opened=" + opened);
                }
            }
            """;
    /** A class in the default package, as a newcomer's first program often is. */
    private static final String HELLO = """
            public class Hello {
                public static void main(String[] args) {
                    System.out.println("HELLO rank " + System.getenv("RANK"));
                }
            }
            """;

    @TempDir
    static Path dir;
    private static Path classes;
    private static Path jar;

    @BeforeAll
    static void compileTheUsersProgram() throws IOException {
        Path src = dir.resolve("src/com/example/user/UserTrain.java");
        Files.createDirectories(src.getParent());
        Files.writeString(src, SOURCE);
        Path hello = Files.writeString(dir.resolve("src/Hello.java"), HELLO);
        classes = Files.createDirectories(dir.resolve("classes"));
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        assertNotNull(javac, "the tests run on a JDK");
        int status = javac.run(null, null, null, "-proc:none", "-cp", System.getProperty("java.class.path"), "-d",
                classes.toString(), src.toString(), hello.toString());
        assertEquals(0, status, "the user's program compiles against tensorbus");
        jar = dir.resolve("user-app.jar");
        Manifest manifest = new Manifest();
        manifest.getMainAttributes().put(Attributes.Name.MANIFEST_VERSION, "1.0");
        manifest.getMainAttributes().put(Attributes.Name.MAIN_CLASS, MAIN);
        manifest.getMainAttributes().putValue("Add-Opens", "java.base/java.lang");
        try (OutputStream file = Files.newOutputStream(jar); JarOutputStream out = new JarOutputStream(file,
                manifest)) {
            out.putNextEntry(new JarEntry("com/example/user/UserTrain.class"));
            out.write(Files.readAllBytes(classes.resolve("com/example/user/UserTrain.class")));
            out.closeEntry();
        }
    }

    private static void assertBothRanksRan(String out, String args, boolean opened, String report) {
        for (int r = 0; r < 2; r++) {
            assertTrue(out.contains("[rank " + r + "] USER rank " + r + " of 2 sum=2.0 args=" + args
                    + " java.lang opened=" + opened), report);
        }
    }

    @Test
    void aUserClassOnTheGivenClassPathRunsOnEveryRank() {
        LaunchResult r = LaunchResult.launch("--nproc-per-node", "2", "--timeout", "90", "--classpath",
                classes.toString(), MAIN, "a", "b");
        assertEquals(0, r.code(), r.toString());
        assertBothRanksRan(r.out(), "a,b", false, r.toString());
    }

    @Test
    void aUserJarRunsItsMainClassOnEveryRankWithTheOpensItsManifestAsks() {
        LaunchResult r = LaunchResult.launch("--nproc-per-node", "2", "--timeout", "90", "-jar", jar.toString(), "x",
                "--y");
        assertEquals(0, r.code(), r.toString());
        assertBothRanksRan(r.out(), "x,--y", true, r.toString());
    }

    @Test
    void theCommandLineHonoursClasspathAsJavaDoes() throws Exception {
        try (ChildJvm launcher = ChildJvm.start("launcher", Map.of("CLASSPATH", classes.toString()),
                Main.class.getName(), "launch", "--nproc-per-node", "2", "--timeout", "90", MAIN, "c")) {
            Integer code = launcher.awaitExit(Duration.ofSeconds(100));
            assertEquals(0, code, launcher.output());
            assertBothRanksRan(launcher.output(), "c", false, launcher.output());
        }
    }

    @Test
    void aClassOfTheDefaultPackageRunsWhenItsClassPathIsGiven() {
        LaunchResult r = LaunchResult.launch("--nproc-per-node", "2", "-cp", classes.toString(), "Hello");
        assertEquals(0, r.code(), r.toString());
        assertTrue(r.out().contains("[rank 0] HELLO rank 0") && r.out().contains("[rank 1] HELLO rank 1"),
                r.toString());
    }

    @Test
    void aUserClassNotOnTheClassPathIsRefusedSayingHowToAddIt() {
        LaunchResult r = LaunchResult.launch("--nproc-per-node", "2", MAIN);
        assertEquals(2, r.code(), r.toString());
        assertTrue(r.err().contains("TARGET class " + MAIN + " is not on the class path")
                && r.err().contains("--classpath PATH or CLASSPATH"), r.toString());
    }
}
