package io.tensorbus.workloads.cli;

import io.tensorbus.spi.BackendProvider;
import io.tensorbus.spi.DeviceInfo;
import io.tensorbus.spi.DeviceRuntimeProvider;
import io.tensorbus.tensor.CpuInfo;
import io.tensorbus.tensor.Threads;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.util.Properties;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;

/**
 * {@code tensorbus info}: what this JVM offers the kernels (JDK, cores, Vector API width), which
 * tensorbus build runs, the devices of every device runtime (OpenCL platforms and devices; or why a runtime has
 * none) and the communication backends {@link java.util.ServiceLoader} found.
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
        out.println("cpu: " + CpuInfo.current().describe());
        out.println("available processors: " + Runtime.getRuntime().availableProcessors());
        out.println("compute threads: " + Threads.get());
        out.println("vector species (preferred): " + species.length() + " float lanes, " + species.vectorBitSize()
                + " bits");
        for (DeviceRuntimeProvider p : DeviceRuntimeProvider.all()) {
            if (!p.isAvailable()) {
                Throwable cause = p.unavailabilityCause();
                out.println("devices " + p.type() + ": none ("
                        + (cause == null ? "no reason given" : cause.getMessage())
                        + ")");
                continue;
            }
            for (DeviceInfo d : p.runtime().devices()) {
                out.println("device " + d);
            }
        }
        if (DeviceRuntimeProvider.all().stream().noneMatch(p -> p.type().equals("cuda"))) {
            out.println("devices cuda: none (tensorbus has no CUDA device runtime yet)");
        }
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
