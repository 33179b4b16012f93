package io.tensorbus.distributed;

import io.tensorbus.internal.distributed.Meters;
import io.tensorbus.spi.Backend;
import io.tensorbus.spi.BackendCounter;
import java.util.ArrayList;
import java.util.List;

/**
 * The polled meters of one member's group, there while it lives: its backend's own counters
 * ({@code tensorbus.backend.NAME}, tagged {@code group}, {@code rank}, {@code backend}) and the memory of the device
 * it is bound to ({@link Meters#deviceMemory}).
 */
final class GroupMeters {
    private final List<Meters.PolledMeter> meters;

    private GroupMeters(List<Meters.PolledMeter> meters) {
        this.meters = meters;
    }

    /** The meters of {@code group}, whose member backend is {@code backend}; none for a non-member (null). */
    static GroupMeters of(ProcessGroup group, Backend backend) {
        if (backend == null) {
            return new GroupMeters(List.of());
        }
        String rank = Integer.toString(group.globalRank(backend.rank()));
        List<Meters.PolledMeter> meters = new ArrayList<>();
        for (BackendCounter c : backend.counters()) {
            meters.add(Meters.functionCounter(Meters.PREFIX + "backend." + c.name(), c.total(), c.baseUnit(),
                    c.description(), "group", group.name(), "rank", rank, "backend", backend.name()));
        }
        group.boundDeviceId().filter(d -> !d.isCpu()).ifPresent(Meters::deviceMemory);
        return new GroupMeters(meters);
    }

    /** Takes the group's meters off every registry. */
    void remove() {
        meters.forEach(Meters.PolledMeter::remove);
    }
}
