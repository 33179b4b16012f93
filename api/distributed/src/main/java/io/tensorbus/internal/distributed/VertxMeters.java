package io.tensorbus.internal.distributed;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.composite.CompositeMeterRegistry;
import io.vertx.core.Vertx;
import io.vertx.core.VertxBuilder;
import io.vertx.core.VertxOptions;
import io.vertx.micrometer.MicrometerMetricsFactory;
import io.vertx.micrometer.MicrometerMetricsOptions;
import java.util.List;

/**
 * Builders of the Vert.x instances tensorbus makes for itself (a group's, a Hazelcast member's), with Vert.x's own
 * metrics ({@code vertx-micrometer-metrics}: {@code vertx.net.*}, {@code vertx.eventbus.*}, {@code vertx.http.*},
 * {@code vertx.pool.*}) reporting to the registries bound when each is made, if that module is on the class path.
 * Without it, or with no registry bound then, the builder makes a plain Vert.x: Vert.x fixes its metrics when it
 * is made, so one made before a registry is bound never reports to it.
 */
public final class VertxMeters {
    private static final boolean PRESENT = present();

    private VertxMeters() {
    }

    private static boolean present() {
        try {
            Class.forName("io.vertx.micrometer.MicrometerMetricsFactory", false, VertxMeters.class.getClassLoader());
            return true;
        } catch (ClassNotFoundException | LinkageError e) {
            return false;
        }
    }

    /** A builder of a Vert.x with {@code options}, and with Vert.x's metrics when they can report somewhere. */
    public static VertxBuilder builder(VertxOptions options) {
        List<MeterRegistry> bound = Meters.registries();
        if (!PRESENT || bound.isEmpty()) {
            return Vertx.builder().with(options);
        }
        return WithMetrics.builder(options, bound);
    }

    /** Loaded only when {@code vertx-micrometer-metrics} is present. */
    private static final class WithMetrics {
        private WithMetrics() {
        }

        static VertxBuilder builder(VertxOptions options, List<MeterRegistry> bound) {
            MeterRegistry registry = bound.size() == 1 ? bound.get(0) : composite(bound);
            return Vertx.builder().with(new VertxOptions(options).setMetricsOptions(new MicrometerMetricsOptions()
                    .setEnabled(true))).withMetrics(new MicrometerMetricsFactory(registry));
        }

        private static MeterRegistry composite(List<MeterRegistry> bound) {
            CompositeMeterRegistry all = new CompositeMeterRegistry();
            bound.forEach(all::add);
            return all;
        }
    }
}
