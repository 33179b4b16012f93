package io.tensorbus.tensor;

import io.tensorbus.DType;
import io.tensorbus.internal.tensor.Shapes;
import java.util.Locale;

/** PyTorch-style printing: {@code tensor([[1.0000, 2.0000], ...], shape=[2, 2], dtype=float32)}. */
final class Printer {
    private static final int THRESHOLD = 1000;
    private static final int EDGE = 3;

    private Printer() {
    }

    static String print(Tensor t) {
        if (!t.device().isCpu()) {
            String host = print(t.cpu());
            return host.substring(0, host.length() - 1) + ", device='" + t.device() + "')";
        }
        Tensor c = t.detach();
        boolean summarize = c.numel() > THRESHOLD;
        Format f = Format.of(c);
        StringBuilder sb = new StringBuilder("tensor(");
        if (c.dim() == 0) {
            sb.append(f.format(c.item()));
        } else {
            body(c, f, summarize, 7, sb);
        }
        sb.append(", shape=").append(Shapes.str(t.shape())).append(", dtype=").append(t.dtype());
        if (t.gradFn() != null) {
            sb.append(", grad_fn=<").append(t.gradFn().name()).append('>');
        } else if (t.requiresGrad()) {
            sb.append(", requires_grad=True");
        }
        return sb.append(')').toString();
    }

    private static void body(Tensor t, Format f, boolean summarize, int indent, StringBuilder sb) {
        int n = t.size(0);
        sb.append('[');
        for (int i = 0; i < n; i++) {
            if (summarize && n > 2 * EDGE && i == EDGE) {
                sb.append(t.dim() == 1 ? "..., " : "...,\n" + " ".repeat(indent + 1));
                i = n - EDGE;
            }
            Tensor row = t.select(0, i);
            if (t.dim() == 1) {
                sb.append(f.format(row.item()));
            } else {
                body(row, f, summarize, indent + 1, sb);
            }
            if (i < n - 1) {
                sb.append(t.dim() == 1 ? ", " : ",\n".repeat(t.dim() - 1) + " ".repeat(indent + 1));
            }
        }
        sb.append(']');
    }

    /** How numbers print: integer-valued floats as {@code 1.}, others with 4 decimals or in e-notation. */
    private record Format(DType dtype, boolean integral, boolean scientific) {
        static Format of(Tensor t) {
            if (!t.dtype().isFloatingPoint() || t.numel() == 0) {
                return new Format(t.dtype(), true, false);
            }
            double[] v = t.toDoubleArray();
            boolean integral = true;
            double maxAbs = 0;
            double minAbs = Double.MAX_VALUE;
            for (double x : v) {
                if (Double.isFinite(x)) {
                    integral &= x == Math.rint(x);
                    double a = Math.abs(x);
                    maxAbs = Math.max(maxAbs, a);
                    if (a > 0) {
                        minAbs = Math.min(minAbs, a);
                    }
                }
            }
            boolean sci = !integral && (maxAbs >= 1e8 || (minAbs < 1e-4 && minAbs != Double.MAX_VALUE)
                    || (minAbs != Double.MAX_VALUE && maxAbs / minAbs > 1000));
            return new Format(t.dtype(), integral && maxAbs < 1e8, sci);
        }

        String format(double x) {
            if (dtype == DType.BOOL) {
                return x != 0 ? "True" : "False";
            }
            if (!dtype.isFloatingPoint()) {
                return Long.toString((long) x);
            }
            if (Double.isNaN(x)) {
                return "nan";
            }
            if (Double.isInfinite(x)) {
                return x > 0 ? "inf" : "-inf";
            }
            if (integral) {
                return (long) x + ".";
            }
            return scientific ? String.format(Locale.ROOT, "%.4e", x) : String.format(Locale.ROOT, "%.4f", x);
        }
    }
}
