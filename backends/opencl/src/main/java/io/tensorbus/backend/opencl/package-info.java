/**
 * OpenCL through JOCL: the device runtime ({@link io.tensorbus.backend.opencl.OpenClRuntime}: buffers, copies,
 * the collectives' reduction kernels and the tensor kernels, on every device of every platform) and the
 * {@code opencl} backend, which carries OpenCL buffers between processes on the tcp backend's transport and
 * reduces them with the runtime's kernels.
 *
 * <p>Threads: nothing here blocks. Commands go onto one in-order command queue per context from whichever thread
 * calls (kernel arguments and launch are serialised per kernel object); each command's event completes its
 * future on the daemon thread {@code tensorbus-opencl-events}, as OpenCL forbids slow work in its own callback
 * threads. The backend's matching and I/O run on the tcp transport's event loop, which moves every device
 * future's continuation back onto itself.
 */
package io.tensorbus.backend.opencl;
