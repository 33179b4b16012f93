/**
 * The plugin contract, what backend plugins implement, as c10d's {@code Backend} and DJL's engine SPI: a
 * {@link io.tensorbus.spi.BackendProvider} found by {@code ServiceLoader}, the {@link io.tensorbus.spi.Backend}
 * of one process group, its {@link io.tensorbus.spi.BackendOptions}, {@link io.tensorbus.spi.DeviceBuffer}s, and
 * the device SPI: a {@link io.tensorbus.spi.DeviceRuntimeProvider} per device type whose
 * {@link io.tensorbus.spi.DeviceRuntime} allocates, copies and reduces device buffers. The pieces our plugins share
 * (the secret handshake, host reductions, shared memory, device kernels) are in {@code io.tensorbus.spi.support}, a
 * separate artifact a plugin may use but need not. User code never imports this package.
 *
 * <p>Threads: a backend's methods are called from any thread and must return at once with a future; the backend
 * does its I/O on threads of its own (the tcp backend: one Vert.x event loop per group) and completes the
 * futures there. Providers must be cheap to construct and load native libraries only on first use.
 */
package io.tensorbus.spi;
