package io.tensorbus.internal.io;

import io.tensorbus.tensor.Tensor;
import java.lang.foreign.MemorySegment;

/** Access to the bytes of tensors for the readers and writers. */
public final class TensorBytes {
    private static final MemorySegment EMPTY = MemorySegment.ofArray(new byte[0]);

    private TensorBytes() {
    }

    /**
     * The tensor in host memory in row-major order without gaps: itself when it already is, else a copy (a device
     * tensor comes to the host, so that files and messages hold its values). A tensor with no elements is returned
     * as is (it has no bytes to order).
     */
    public static Tensor contiguous(Tensor t) {
        return t.numel() == 0 ? t : t.cpu().contiguous();
    }

    /**
     * The bytes of a tensor returned by {@link #contiguous(Tensor)} or freshly created: its
     * {@link Tensor#dataSegment()}, or an empty segment when it has no elements (whatever its strides).
     */
    public static MemorySegment of(Tensor t) {
        return t.numel() == 0 ? EMPTY : t.dataSegment();
    }
}
