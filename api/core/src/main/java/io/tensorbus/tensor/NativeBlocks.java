package io.tensorbus.tensor;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.util.Optional;

/**
 * Tensor memory from the C library's allocator ({@code aligned_alloc} and {@code free}), as PyTorch's CPU
 * allocator takes it from {@code posix_memalign}: outside the JVM's direct-memory reservation, which
 * {@link Arena#allocate} counts against (its limit defaults to the heap cap). Netty's socket buffers live in that
 * reservation; tensors sharing it let a cache full of freed tensor blocks starve a peer's read under
 * {@code -Xmx512m}. Tensor memory is bounded by {@link CachingHostAllocator}'s own limit instead.
 *
 * <p>A block is a segment of the global scope: it stays valid until {@link #free} and nothing frees it
 * otherwise. Where the C library has no {@code aligned_alloc} (Windows), blocks come from automatic arenas, as
 * before, and {@link #free} leaves them to the garbage collector.
 */
final class NativeBlocks {
    private static final MethodHandle ALIGNED_ALLOC;
    private static final MethodHandle FREE;

    static {
        Linker linker = Linker.nativeLinker();
        Optional<MemorySegment> alloc = linker.defaultLookup().find("aligned_alloc");
        Optional<MemorySegment> free = linker.defaultLookup().find("free");
        if (alloc.isPresent() && free.isPresent()) {
            ALIGNED_ALLOC = linker.downcallHandle(alloc.get(),
                    FunctionDescriptor.of(ValueLayout.ADDRESS, ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG));
            FREE = linker.downcallHandle(free.get(), FunctionDescriptor.ofVoid(ValueLayout.ADDRESS));
        } else {
            ALIGNED_ALLOC = null;
            FREE = null;
        }
    }

    private NativeBlocks() {
    }

    /** True when blocks come from the C library (and {@link #free} frees them at once). */
    static boolean outsideTheHeapReservation() {
        return ALIGNED_ALLOC != null;
    }

    /**
     * A block of {@code size} bytes (a multiple of {@code alignment}), aligned to {@code alignment}, holding
     * whatever the allocator left there; null when the C library has no memory for it.
     */
    static MemorySegment allocate(long size, long alignment) {
        if (ALIGNED_ALLOC == null) {
            try {
                return Arena.ofAuto().allocate(size, alignment);
            } catch (OutOfMemoryError e) {
                return null;
            }
        }
        try {
            MemorySegment block = (MemorySegment) ALIGNED_ALLOC.invokeExact(alignment, size);
            return block.equals(MemorySegment.NULL) ? null : block.reinterpret(size);
        } catch (Throwable e) {
            throw new IllegalStateException("aligned_alloc(" + alignment + ", " + size + ") failed", e);
        }
    }

    /** Gives {@code block} back to the C library; it must come from {@link #allocate} and not be used again. */
    static void free(MemorySegment block) {
        if (FREE == null) {
            return;
        }
        try {
            FREE.invokeExact(block);
        } catch (Throwable e) {
            throw new IllegalStateException("free(" + block + ") failed", e);
        }
    }
}
