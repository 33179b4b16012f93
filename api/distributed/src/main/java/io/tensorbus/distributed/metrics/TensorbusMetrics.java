package io.tensorbus.distributed.metrics;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.tensorbus.internal.distributed.Meters;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * Turns tensorbus's meters on for a Micrometer registry, as Micrometer's own binders do
 * ({@code new TensorbusMetrics().bindTo(registry)}); {@link #close()} turns them off again. Metrics are off until a
 * registry is bound, and then cost the recording sites nothing but a branch. Every process group, RPC agent, DDP
 * model, pipeline and store of this process reports to every bound registry, tagged with its rank or worker:
 *
 * <ul>
 *   <li>{@code tensorbus.collective} (timer; tags {@code group}, {@code rank}, {@code op}, {@code dtype},
 *       {@code size}, {@code outcome}) and {@code tensorbus.collective.bytes} (counter of the bytes this rank
 *       contributed); {@code tensorbus.p2p} and {@code tensorbus.p2p.bytes} for sends and receives;</li>
 *   <li>{@code tensorbus.rpc.calls} (timer of calls made; tags {@code worker}, {@code function},
 *       {@code outcome}), {@code tensorbus.rpc.calls.bytes} (arguments sent), {@code tensorbus.rpc.served}
 *       (calls run for others), {@code tensorbus.rpc.calls.in.flight}, {@code tensorbus.rrefs} (tag {@code role}:
 *       {@code owner} or {@code user}) and {@code tensorbus.dist.autograd.contexts} (gauges);</li>
 *   <li>{@code tensorbus.ddp.step} (timer from forward to the last bucket's reduced gradients),
 *       {@code tensorbus.ddp.bucket.allreduce} (timer) and {@code tensorbus.ddp.overlap} (the share of a step's
 *       bucket reductions that ran during backward, 0 to 1);</li>
 *   <li>{@code tensorbus.pipeline.stage.busy} (timer of each micro-batch a stage computes; tags {@code rank},
 *       {@code pass}) and {@code tensorbus.pipeline.bubble} (the share of a forward pass, 0 to 1, in which a stage
 *       computed nothing, recorded by the driver from the second pass on; tags {@code stage}, {@code worker});</li>
 *   <li>{@code tensorbus.store} (timer of store requests; tags {@code store}: {@code tcp}, {@code hash},
 *       {@code file} or {@code cluster}, and {@code op});</li>
 *   <li>{@code tensorbus.backend.NAME}: counters a group's backend keeps about itself (tags {@code group},
 *       {@code rank}, {@code backend}): the tcp backend's {@code shm.ring.full} (frames that found a shared-memory
 *       ring to a peer full) and {@code shm.ring.full.time} (seconds they waited for room);</li>
 *   <li>{@code tensorbus.memory.allocated}, {@code tensorbus.memory.peak} and {@code tensorbus.memory.cached}
 *       (gauges in bytes of the caching allocator of the host and of each device a group is bound to; tag
 *       {@code device}).</li>
 * </ul>
 *
 * <p>With {@code io.vertx:vertx-micrometer-metrics} on the class path, the Vert.x instances tensorbus makes while a
 * registry is bound ({@code Distributed.newVertx()}, a group's own, a Hazelcast member's) also report Vert.x's own
 * metrics ({@code vertx.net.*}, {@code vertx.eventbus.*}, ...) to it; a Vert.x an application passes in reports
 * what the application built it with.
 *
 * <p>Timers publish a percentile histogram (1 us to 10 min), so Prometheus can compute latency quantiles across
 * ranks. The {@code size} tag is the message's size class ({@code <=16B}, {@code <=256B}, ... {@code >256MiB}).
 * Thread-safe.
 */
public final class TensorbusMetrics implements MeterBinder, AutoCloseable {
    private final List<MeterRegistry> bound = new ArrayList<>();

    /** A binder with no registry yet. */
    public TensorbusMetrics() {
    }

    /**
     * Reports tensorbus's meters to {@code registry} from now on, those of groups and agents made before included.
     *
     * @throws NullPointerException when {@code registry} is null
     */
    @Override
    public synchronized void bindTo(MeterRegistry registry) {
        Objects.requireNonNull(registry, "registry");
        Meters.bind(registry);
        bound.add(registry);
    }

    /** Stops reporting to the registries this binder bound; metrics turn off when no binder holds one. */
    @Override
    public synchronized void close() {
        bound.forEach(Meters::unbind);
        bound.clear();
    }

    /** True when some registry is bound, that is, when tensorbus records its meters. */
    public static boolean enabled() {
        return Meters.on();
    }
}
