package io.tensorbus.spi.archfixture;

import io.tensorbus.DType;
import io.tensorbus.c10d.ReduceOp;
import io.tensorbus.spi.support.HostReductions;
import java.lang.foreign.MemorySegment;

/**
 * A contract class that calls plugin-support's {@code HostReductions}: {@code CONTRACT_NEEDS_NO_SUPPORT} must report
 * it.
 */
public final class ContractNamingSupport {
    private ContractNamingSupport() {
    }

    /** Sums on the host through the support artifact, which a plugin compiled against the SPI alone lacks. */
    public static void sum(MemorySegment acc, MemorySegment src) {
        HostReductions.reduceInto(ReduceOp.SUM, DType.FLOAT32, acc, src);
    }
}
