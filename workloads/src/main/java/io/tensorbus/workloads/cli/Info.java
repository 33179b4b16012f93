package io.tensorbus.workloads.cli;

import io.tensorbus.spi.BackendProvider;
import io.tensorbus.tensor.Threads;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.util.Properties;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;

/**
 * {@code tensorbus info}: what this JVM offers the kernels (JDK, cores, Vector API width), which
 * tensorbus build runs, and the communication backends {@link java.util.ServiceLoader} found.
 */
public final class Info {
    private Info() {
    }

    /** Prints one {@code key: value} line per fact. */
    public static void print(PrintStream out) {
        VectorSpecies<Float> species = FloatVector.SPECIES_PREFERRED;
        out.println("tensorbus: " + version());
        out.println("java: " + Runtime.version() + " (" + System.getProperty("java.vm.vendor") + ", "
                + System.getProperty("java.home") + ")");
        out.println("os: " + System.getProperty("os.name") + " " + System.getProperty("os.arch"));
        out.println("available processors: " + Runtime.getRuntime().availableProcessors());
        out.println("compute threads: " + Threads.get());
        out.println("vector species (preferred): " + species.length() + " float lanes, " + species.vectorBitSize()
                + " bits");
        for (BackendProvider p : BackendProvider.all()) {
            Throwable cause = p.isAvailable() ? null : p.unavailabilityCause();
            out.println("backend " + p.name() + ": " + (cause == null && p.isAvailable() ? "available"
                    : "unavailable (" + (cause == null ? "no reason given" : cause.getMessage()) + ")"));
        }
    }

    /** The tensorbus version from the jar's Maven metadata, or a note when running from classes. */
    public static String version() {
        String path = "/META-INF/maven/io.tensorbus/tensorbus-workloads/pom.properties";
        try (InputStream in = Info.class.getResourceAsStream(path)) {
            if (in == null) {
                return "unknown (not run from the built jar)";
            }
            Properties p = new Properties();
            p.load(in);
            return p.getProperty("version", "unknown");
        } catch (IOException e) {
            return "unknown (" + e.getMessage() + ")";
        }
    }
}
