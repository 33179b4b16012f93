package io.tensorbus.spi.contract;

import io.tensorbus.DType;
import io.tensorbus.c10d.ReduceOp;
import io.tensorbus.spi.DeviceBuffer;
import java.util.ArrayList;
import java.util.List;

import static io.tensorbus.spi.contract.Buffers.get;
import static io.tensorbus.spi.contract.Buffers.getLong;
import static io.tensorbus.spi.contract.Buffers.put;
import static io.tensorbus.spi.contract.Buffers.putLong;

/**
 * What the reducing collectives must produce, computed by the test itself, and the inputs the tests feed
 * them. Floating-point inputs are small multiples of 1/2 (and products of powers of two), so that every
 * result is exact in every float dtype whatever order a backend reduces in: results are compared bit for bit.
 */
public final class Reference {
    private static final double[] FLOAT_FACTORS = {1, 2, -1, 0.5, -2};
    private static final long[] INT_FACTORS = {1, 2, -1, 3, -2};

    private Reference() {
    }

    /**
     * The reduce ops a backend is handed for {@code dtype} (AVG needs a float dtype, the bitwise ops an integer or
     * bool; PREMUL_SUM reaches backends as SUM of pre-multiplied tensors).
     */
    public static List<ReduceOp> opsFor(DType dtype) {
        List<ReduceOp> ops = new ArrayList<>();
        for (ReduceOp op : ReduceOp.plain()) {
            try {
                op.checkSupports(dtype);
                ops.add(op);
            } catch (IllegalArgumentException notForThisDtype) {
                // skipped: the group refuses it before a backend sees it
            }
        }
        return ops;
    }

    /** A well-mixed 64-bit hash of (rank, i): the test's pseudo-random integers. */
    public static long mix(long rank, long i) {
        long z = rank * 0x9E3779B97F4A7C15L + i * 0xBF58476D1CE4E5B9L + 0x632BE59BD9B4E019L;
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }

    /** Rank {@code rank}'s input for reducing with {@code op}: a buffer of {@code n} elements. */
    public static DeviceBuffer input(DType dtype, ReduceOp op, int rank, int world, long n) {
        DeviceBuffer b = Buffers.vector(dtype, n);
        fill(b, op, rank, world, 0);
        return b;
    }

    /** Fills {@code b} with rank {@code rank}'s values for {@code op}; {@code salt} varies them per use. */
    public static void fill(DeviceBuffer b, ReduceOp op, int rank, int world, long salt) {
        long n = b.numel();
        DType t = b.dtype();
        for (long i = 0; i < n; i++) {
            long k = i + salt;
            if (t.isFloatingPoint()) {
                put(b, i, floatValue(op, rank, world, k));
            } else {
                putLong(b, i, intValue(t, op, rank, k));
            }
        }
    }

    static double floatValue(ReduceOp op, int rank, int world, long i) {
        return switch (op.type()) {
            case PRODUCT -> FLOAT_FACTORS[(int) ((i + 3L * rank) % FLOAT_FACTORS.length)];
            // Offsets that sum to zero over the ranks: the mean is exactly (i % 9) - 4.
            case AVG -> (i % 9) - 4 + (2 * rank - (world - 1));
            default -> ((i * 7 + rank * 13L) % 11) - 5 + (rank % 2) * 0.5;
        };
    }

    static long intValue(DType t, ReduceOp op, int rank, long i) {
        long m = mix(rank, i);
        if (t == DType.BOOL) {
            // Mostly true for the "and" ops, mostly false for the "or" ops, so that both outcomes occur.
            return switch (op.type()) {
                case PRODUCT, MIN, BAND -> (m & 7) != 0 ? 1 : 0;
                case SUM, MAX, BOR -> (m & 7) == 0 ? 1 : 0;
                default -> m & 1;
            };
        }
        return switch (op.type()) {
            // Large enough that the sum of several ranks wraps around, as two's complement does in PyTorch.
            case SUM -> (t == DType.INT64 ? Long.MAX_VALUE / 3 : Integer.MAX_VALUE / 3) * (rank + 1) + i * 7 - rank;
            case PRODUCT -> INT_FACTORS[(int) ((i + 3L * rank) % INT_FACTORS.length)];
            default -> t == DType.INT32 ? (int) m : m;
        };
    }

    /** The element-wise reduction of {@code inputs} with {@code op}, in their dtype. */
    public static DeviceBuffer reduce(ReduceOp op, List<DeviceBuffer> inputs) {
        DType t = inputs.getFirst().dtype();
        long n = inputs.getFirst().numel();
        int world = inputs.size();
        DeviceBuffer out = Buffers.alloc(t, inputs.getFirst().shape());
        for (long i = 0; i < n; i++) {
            if (t.isFloatingPoint()) {
                double acc = get(inputs.getFirst(), i);
                for (int r = 1; r < world; r++) {
                    acc = combine(op, acc, get(inputs.get(r), i));
                }
                put(out, i, op == ReduceOp.AVG ? acc / world : acc);
            } else if (t == DType.BOOL) {
                boolean acc = getLong(inputs.getFirst(), i) != 0;
                for (int r = 1; r < world; r++) {
                    boolean v = getLong(inputs.get(r), i) != 0;
                    acc = switch (op.type()) {
                        case SUM, MAX, BOR -> acc | v;
                        case PRODUCT, MIN, BAND -> acc & v;
                        case BXOR -> acc ^ v;
                        case AVG, PREMUL_SUM -> throw new IllegalArgumentException(op + " on bool");
                    };
                }
                putLong(out, i, acc ? 1 : 0);
            } else {
                long acc = getLong(inputs.getFirst(), i);
                for (int r = 1; r < world; r++) {
                    acc = combine(op, acc, getLong(inputs.get(r), i));
                }
                putLong(out, i, t == DType.INT32 ? (int) acc : acc);
            }
        }
        return out;
    }

    static double combine(ReduceOp op, double a, double b) {
        return switch (op.type()) {
            case SUM, AVG -> a + b;
            case PRODUCT -> a * b;
            case MAX -> Math.max(a, b);
            case MIN -> Math.min(a, b);
            default -> throw new IllegalArgumentException(op + " on a float dtype");
        };
    }

    static long combine(ReduceOp op, long a, long b) {
        return switch (op.type()) {
            case SUM -> a + b;
            case PRODUCT -> a * b;
            case MAX -> Math.max(a, b);
            case MIN -> Math.min(a, b);
            case BAND -> a & b;
            case BOR -> a | b;
            case BXOR -> a ^ b;
            case AVG, PREMUL_SUM -> throw new IllegalArgumentException(op + " on an integer dtype");
        };
    }
}
