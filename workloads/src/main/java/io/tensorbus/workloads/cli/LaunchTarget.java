package io.tensorbus.workloads.cli;

import java.io.File;
import java.io.IOException;
import java.net.MalformedURLException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.jar.JarFile;
import java.util.jar.Manifest;

/**
 * What each rank of {@code tensorbus launch} runs: the main class and the class path in front of tensorbus's
 * own. The user's class path is {@code --classpath}; for a main class without it, {@code CLASSPATH} (as
 * {@code java} reads it). With {@code -jar app.jar} the jar leads it, its manifest names the main class (the
 * JVM follows the manifest's {@code Class-Path} itself) and its {@code Add-Opens} and {@code Add-Exports}
 * become JVM flags, as {@code java -jar} would apply them. A workload name runs tensorbus's
 * {@code Main run NAME}; a name without dots that is a class of the given class path runs that class.
 *
 * @param mainClass the class whose {@code main} each rank runs
 * @param userClassPath what goes before tensorbus's class path, or "" for nothing
 * @param programArgs the arguments every rank's {@code main} gets
 * @param jvmFlags JVM options the target itself asks for (a jar's manifest), before the class path
 */
record LaunchTarget(String mainClass, String userClassPath, List<String> programArgs, List<String> jvmFlags) {
    /** The main class that runs a workload given by name. */
    static final String WORKLOAD_MAIN = Main.class.getName();

    /**
     * Resolves {@code o}'s target with the environment {@code env} and checks that the class can be found.
     *
     * @throws IllegalArgumentException saying what is missing and how to give it
     */
    static LaunchTarget resolve(LaunchOptions o, Map<String, String> env) {
        LaunchTarget target = resolveOne(o, env);
        return o.ranksAsThreads() ? target.asRankThreads() : target;
    }

    /** This target run by {@link RankThreads}, which runs it once per rank of the node. */
    LaunchTarget asRankThreads() {
        List<String> args = new ArrayList<>();
        args.add(mainClass);
        args.addAll(programArgs);
        return new LaunchTarget(RankThreads.class.getName(), userClassPath, List.copyOf(args), jvmFlags);
    }

    private static LaunchTarget resolveOne(LaunchOptions o, Map<String, String> env) {
        // Only a main class reads CLASSPATH, as java -jar ignores it: a stray one must not shadow tensorbus's
        // own dependencies in a workload or a jar.
        String given = o.classPath() != null ? o.classPath() : "";
        if (o.jar()) {
            Path jar = Path.of(o.target());
            Manifest manifest = manifestOf(jar);
            String main = mainClassOf(jar, manifest);
            String cp = given.isEmpty() ? jar.toString() : jar + File.pathSeparator + given;
            return checked(new LaunchTarget(main, cp, o.targetArgs(), manifestFlags(manifest)),
                    "the Main-Class " + main + " of " + jar);
        }
        if (!isMainClass(o.target()) && !(!given.isEmpty() && isUserClass(o.target(), given))) {
            List<String> args = new ArrayList<>(List.of("run", o.target()));
            args.addAll(o.targetArgs());
            return new LaunchTarget(WORKLOAD_MAIN, given, List.copyOf(args), List.of());
        }
        String cp = o.classPath() != null ? given : env.getOrDefault("CLASSPATH", "").trim();
        return checked(new LaunchTarget(o.target(), cp, o.targetArgs(), List.of()), "TARGET class " + o.target());
    }

    /** True for a class in the default package of {@code classPath} (a name without dots). */
    private static boolean isUserClass(String name, String classPath) {
        if (!name.chars().allMatch(Character::isJavaIdentifierPart)
                || !Character.isJavaIdentifierStart(name.charAt(0))) {
            return false;
        }
        try (URLClassLoader loader = new URLClassLoader(urls(classPath), null)) {
            Class.forName(name, false, loader);
            return true;
        } catch (ClassNotFoundException | LinkageError | IOException e) {
            return false;
        }
    }

    /** True when TARGET names a class (it has a dot) rather than a workload. */
    static boolean isMainClass(String target) {
        return target.contains(".");
    }

    /** The class path of a rank: the user's, then {@code own} (the launcher's). */
    String classPath(String own) {
        return userClassPath.isEmpty() ? own : userClassPath + File.pathSeparator + own;
    }

    private static Manifest manifestOf(Path jar) {
        if (!Files.isRegularFile(jar)) {
            throw new IllegalArgumentException("-jar " + jar + ": no such file");
        }
        try (JarFile file = new JarFile(jar.toFile())) {
            Manifest m = file.getManifest();
            return m == null ? new Manifest() : m;
        } catch (IOException e) {
            throw new IllegalArgumentException("-jar " + jar + " is not a readable jar: " + e.getMessage(), e);
        }
    }

    private static String mainClassOf(Path jar, Manifest m) {
        String main = m.getMainAttributes().getValue("Main-Class");
        if (main == null || main.isBlank()) {
            throw new IllegalArgumentException("-jar " + jar + ": its manifest names no Main-Class; give the"
                    + " main class instead: --classpath " + jar + " com.example.Main");
        }
        if (m.getMainAttributes().getValue("Launcher-Agent-Class") != null) {
            throw new IllegalArgumentException("-jar " + jar + ": its manifest names a Launcher-Agent-Class, which"
                    + " only java -jar starts; add the agent to TENSORBUS_JVM_OPTS as -javaagent:" + jar
                    + " and launch its Main-Class with --classpath " + jar);
        }
        return main.trim();
    }

    /** {@code --add-opens}/{@code --add-exports} for the manifest's Add-Opens and Add-Exports, as java -jar. */
    private static List<String> manifestFlags(Manifest m) {
        List<String> flags = new ArrayList<>();
        for (String[] attribute : new String[][] {{"Add-Opens", "--add-opens"}, {"Add-Exports", "--add-exports"}}) {
            String packages = m.getMainAttributes().getValue(attribute[0]);
            for (String p : packages == null ? new String[0] : packages.trim().split("\\s+")) {
                if (!p.isEmpty()) {
                    flags.addAll(List.of(attribute[1], p + "=ALL-UNNAMED"));
                }
            }
        }
        return List.copyOf(flags);
    }

    /** This target, once its main class is found on its class path or tensorbus's. */
    private static LaunchTarget checked(LaunchTarget t, String what) {
        try (URLClassLoader loader = new URLClassLoader(urls(t.userClassPath), LaunchTarget.class.getClassLoader())) {
            Class.forName(t.mainClass, false, loader);
            return t;
        } catch (ClassNotFoundException e) {
            throw new IllegalArgumentException(what + " is not on the class path (" + (t.userClassPath.isEmpty()
                    ? "tensorbus's own; add yours with --classpath PATH or CLASSPATH"
                    : t.userClassPath + " and tensorbus's own") + "); give a fully qualified main class name, or a"
                    + " workload name without dots");
        } catch (LinkageError e) {
            // It is there but does not link here; the rank reports that with its own message.
            return t;
        } catch (IOException e) {
            return t;
        }
    }

    /** The entries of a class path as {@code java} reads them, {@code dir/*} meaning every jar in dir. */
    private static URL[] urls(String classPath) {
        List<URL> urls = new ArrayList<>();
        for (String entry : classPath.split(File.pathSeparator)) {
            if (entry.isBlank()) {
                continue;
            }
            try {
                if (entry.endsWith("*")) {
                    addJars(Path.of(entry.substring(0, entry.length() - 1)), urls);
                } else {
                    urls.add(Path.of(entry).toUri().toURL());
                }
            } catch (MalformedURLException e) {
                throw new IllegalArgumentException("class path entry '" + entry + "' is not a path: " + e.getMessage());
            }
        }
        return urls.toArray(URL[]::new);
    }

    private static void addJars(Path dir, List<URL> urls) throws MalformedURLException {
        if (!Files.isDirectory(dir)) {
            return;
        }
        try (DirectoryStream<Path> jars = Files.newDirectoryStream(dir, "*.{jar,JAR}")) {
            for (Path jar : jars) {
                urls.add(jar.toUri().toURL());
            }
        } catch (IOException e) {
            // An unreadable directory adds nothing, as for java.
        }
    }
}
