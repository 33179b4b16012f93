package io.tensorbus.backend.tcp;

import io.tensorbus.DType;
import io.tensorbus.c10d.ReduceOp;
import io.tensorbus.spi.support.HostReductions;
import java.lang.foreign.MemorySegment;

/**
 * Where the payload of one incoming message goes, as its bytes arrive: copied into a buffer, reduced into an
 * accumulator (so a ring step needs no temporary buffer), or dropped. The bytes come in pieces of any size;
 * the reducing sink keeps a partial element between pieces.
 */
abstract class Sink {
    final long expectedBytes;
    long written;

    private volatile boolean cancelled;
    /** Run by the connection once the whole message went through this sink. */
    Runnable whenFull = () -> { };

    Sink(long expectedBytes) {
        this.expectedBytes = expectedBytes;
    }

    /** Takes the next piece of the message, unless the receive was cancelled (then the bytes are dropped). */
    final void accept(MemorySegment bytes) {
        if (!cancelled) {
            write(bytes);
        }
    }

    /**
     * Drops every later piece: a receive that failed (timeout, lost peer) must not write into a buffer its
     * caller has been told is free again.
     */
    final void cancel() {
        cancelled = true;
    }

    /** Consumes all of {@code bytes}; the caller never passes more than the message has left. */
    abstract void write(MemorySegment bytes);

    /** A sink that copies into {@code dest} (the whole message lands there). */
    static Sink copyInto(MemorySegment dest) {
        return new CopyingSink(dest);
    }

    private static final class CopyingSink extends Sink {
        private final MemorySegment dest;

        CopyingSink(MemorySegment dest) {
            super(dest.byteSize());
            this.dest = dest;
        }

        @Override
        void write(MemorySegment bytes) {
            MemorySegment.copy(bytes, 0, dest, written, bytes.byteSize());
            written += bytes.byteSize();
        }
    }

    /** A sink that combines the message into {@code acc} element-wise with {@code op}. */
    static Sink reduceInto(MemorySegment acc, ReduceOp op, DType dtype) {
        return new ReducingSink(acc, op, dtype);
    }

    /** A sink that drops {@code bytes} bytes (the payload of a message nobody can take). */
    static Sink discard(long bytes) {
        return new Sink(bytes) {
            @Override
            void write(MemorySegment piece) {
                written += piece.byteSize();
            }
        };
    }

    private static final class ReducingSink extends Sink {
        private final MemorySegment acc;
        private final ReduceOp op;
        private final DType dtype;
        private final MemorySegment carry;
        private int carried;

        ReducingSink(MemorySegment acc, ReduceOp op, DType dtype) {
            super(acc.byteSize());
            this.acc = acc;
            this.op = op;
            this.dtype = dtype;
            this.carry = MemorySegment.ofArray(new byte[dtype.byteSize()]);
        }

        @Override
        void write(MemorySegment bytes) {
            int e = dtype.byteSize();
            long at = 0;
            long n = bytes.byteSize();
            if (carried > 0) {
                int take = (int) Math.min(e - carried, n);
                MemorySegment.copy(bytes, 0, carry, carried, take);
                carried += take;
                at = take;
                if (carried == e) {
                    reduce(carry);
                    carried = 0;
                }
            }
            long whole = (n - at) / e * e;
            if (whole > 0) {
                reduce(bytes.asSlice(at, whole));
                at += whole;
            }
            if (at < n) {
                MemorySegment.copy(bytes, at, carry, 0, n - at);
                carried = (int) (n - at);
            }
        }

        private void reduce(MemorySegment elements) {
            HostReductions.reduceInto(op, dtype, acc.asSlice(written, elements.byteSize()), elements);
            written += elements.byteSize();
        }
    }
}
