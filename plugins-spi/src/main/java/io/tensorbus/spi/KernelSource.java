package io.tensorbus.spi;

import java.util.Objects;

/**
 * A program of device kernels written once in tensorbus's kernel dialect, which every {@link DeviceRuntime}
 * compiles for its device type (OpenCL C, CUDA C++ through NVRTC) by putting its prelude of macros in front: a
 * kernel is declared {@code KERNEL void name(...)}, pointers are {@code GLOBAL T*}, the work item's index is
 * {@code GID} (and {@code LID} within its work-group), work-group memory is {@code LOCAL_MEM} with
 * {@code SYNC_LOCAL()} as its barrier, and helpers are {@code DEVICE_FN}. Double precision is enabled, and the
 * element types {@code uchar}, {@code ushort}, {@code uint}, {@code ulong} exist in both dialects. Each
 * {@link DeviceBuffer} argument of a launch becomes two parameters: the pointer and an element offset
 * ({@code ulong}), so kernels read {@code p[po + i]}.
 *
 * <p>A runtime compiles a program once per device (and OpenCL context) and keeps it by {@link #name}, so two
 * different sources must not share a name.
 *
 * @param name what the runtime keeps the compiled program by, also its name in compiler messages
 * @param source the kernels, without a prelude
 */
public record KernelSource(String name, String source) {
    /**
     * @throws IllegalArgumentException for a blank name or source
     */
    public KernelSource {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(source, "source");
        if (name.isBlank() || source.isBlank()) {
            throw new IllegalArgumentException("a kernel source needs a name and kernels, got name '" + name + "'");
        }
    }

    @Override
    public String toString() {
        return "KernelSource[" + name + ", " + source.length() + " chars]";
    }
}
