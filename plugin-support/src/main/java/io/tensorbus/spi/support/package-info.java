/**
 * What our plugins share, apart from the plugin contract in {@code io.tensorbus.spi}: the
 * {@link io.tensorbus.spi.support.SecretHandshake} that authenticates every connection of a job,
 * {@link io.tensorbus.spi.support.HostReductions} for arithmetic in host memory, and for device runtimes built on
 * kernels (OpenCL, CUDA) the {@link io.tensorbus.spi.support.KernelDeviceRuntime} base, the kernel sources in
 * {@link io.tensorbus.spi.support.DeviceKernels} and the argument checks in
 * {@link io.tensorbus.spi.support.DeviceArguments}. A third party's plugin may use this artifact but need not: it
 * compiles against tensorbus-plugins-spi alone. User code never imports this package.
 *
 * <p>Threads: nothing here starts a thread. The handshake's futures complete on its connection's event loop; host
 * reductions and the kernel helpers run on the caller's thread.
 */
package io.tensorbus.spi.support;
