package io.tensorbus.spi.contract;

import io.tensorbus.Device;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;

/**
 * What every device suite of this jar asks of its subclass (the device, and whether it is here) and does first:
 * abort, saying why, when the device is missing, else remember it for the tests.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
public abstract class DeviceSuite {
    private Device dev;

    /** The device the suite runs on. */
    protected abstract Device device();

    /** Aborts the suite (an assumption) when the device is not available here, saying why. */
    protected abstract void assumeAvailable();

    @BeforeAll
    void openDevice() {
        assumeAvailable();
        dev = device();
    }

    /** The suite's device, once the suite started. */
    protected final Device dev() {
        return dev;
    }
}
