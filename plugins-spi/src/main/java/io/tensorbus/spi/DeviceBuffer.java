package io.tensorbus.spi;

import io.tensorbus.DType;
import io.tensorbus.Device;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;

/**
 * A contiguous region of elements that a backend reads or writes: the dense storage of one tensor, with its
 * dtype and shape (the shape is only used to describe and fingerprint collectives). Host buffers expose a
 * {@link MemorySegment}; buffers in device memory come from a {@link DeviceRuntime} (which allocates them or
 * wraps memory the user's own library allocated), and backends move and reduce them through that runtime.
 */
public interface DeviceBuffer {

    /** Where the bytes live. */
    Device device();

    /** True when the bytes are host memory that {@link #segment()} exposes. */
    default boolean isHost() {
        return device().isCpu();
    }

    /** The element type. */
    DType dtype();

    /** The logical shape of the tensor this buffer holds (a copy). */
    long[] shape();

    /** The number of elements: the product of {@link #shape()}. */
    long numel();

    /** The size in bytes: {@code numel() * dtype().byteSize()}. */
    default long byteSize() {
        return numel() * dtype().byteSize();
    }

    /**
     * The host memory of this buffer, exactly {@link #byteSize()} bytes long.
     *
     * @throws UnsupportedOperationException when the buffer lives on a device the host cannot address
     */
    MemorySegment segment();

    /**
     * Wraps host memory.
     *
     * @param segment the bytes, exactly {@code numel(shape) * dtype.byteSize()} long
     * @param dtype the element type
     * @param shape the logical shape (non-negative extents)
     * @throws IllegalArgumentException when the segment size does not match the shape and dtype
     */
    static DeviceBuffer host(MemorySegment segment, DType dtype, long... shape) {
        return new HostBuffer(segment, dtype, shape.clone());
    }

    /** A host buffer: memory the CPU addresses directly. */
    record HostBuffer(MemorySegment segment, DType dtype, long[] shapeArray) implements DeviceBuffer {
        /** Checks that the segment holds exactly the elements the shape names. */
        public HostBuffer {
            if (segment == null || dtype == null || shapeArray == null) {
                throw new NullPointerException("segment, dtype and shape are required");
            }
            long n = 1;
            for (long d : shapeArray) {
                if (d < 0) {
                    throw new IllegalArgumentException("negative extent in shape " + Arrays.toString(shapeArray));
                }
                n *= d;
            }
            if (segment.byteSize() != n * dtype.byteSize()) {
                throw new IllegalArgumentException("segment of " + segment.byteSize() + " bytes does not hold "
                        + dtype + Arrays.toString(shapeArray) + " (" + n * dtype.byteSize() + " bytes)");
            }
        }

        @Override
        public Device device() {
            return Device.CPU;
        }

        @Override
        public long[] shape() {
            return shapeArray.clone();
        }

        @Override
        public long numel() {
            return segment.byteSize() / dtype.byteSize();
        }

        @Override
        public String toString() {
            return dtype + Arrays.toString(shapeArray);
        }
    }
}
