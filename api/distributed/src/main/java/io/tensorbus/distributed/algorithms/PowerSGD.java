package io.tensorbus.distributed.algorithms;

import io.tensorbus.DType;
import io.tensorbus.Device;
import io.tensorbus.autograd.Autograd;
import io.tensorbus.distributed.ProcessGroup;
import io.tensorbus.internal.distributed.Blocking;
import io.tensorbus.internal.distributed.OffLoop;
import io.tensorbus.tensor.Generator;
import io.tensorbus.tensor.MemoryScope;
import io.tensorbus.tensor.Tensor;
import io.vertx.core.Future;
import java.util.ArrayList;
import java.util.List;

/**
 * The PowerSGD hooks of PyTorch's {@code powerSGD_hook} module (Vogels et al., 2019): each gradient matrix M of a
 * bucket is approximated as P Q^T of rank r, and only P and Q are all-reduced. Per bucket and iteration: P = M Q
 * (Q random and orthogonalised the first time, the last iteration's Q after), all-reduce P, orthogonalise it,
 * Q = M^T P, all-reduce Q, and M becomes P Q^T / world. The hook waits for P's all-reduce on the backward thread
 * before it computes Q, so that it issues both all-reduces in its body (a collective issued from a callback could
 * reach the ranks in another order than the next bucket's); the last product runs on a virtual thread.
 */
final class PowerSGD {
    private PowerSGD() {
    }

    /** {@code powerSGD_hook}: every matrix worth it compressed on its own, the rest all-reduced as they are. */
    static Future<Tensor> hook(PowerSGDState state, ProcessGroup group, GradBucket bucket) {
        if (!state.compressing()) {
            state.maybeIncreaseIter(bucket);
            return CommHooks.allReduce().apply(group, bucket);
        }
        Tensor input = bucket.buffer();
        int index = bucket.index();
        Tensor inputCopy;
        List<Tensor> uncompressed = new ArrayList<>();
        List<Tensor> matrices = new ArrayList<>();
        List<Tensor> ps = new ArrayList<>();
        List<Tensor> qs = new ArrayList<>();
        Tensor flatUncompressed;
        Tensor pMemory;
        Tensor qMemory;
        try (var ignored = Autograd.noGrad()) {
            inputCopy = addError(state, index, input);
            long pSize = 0;
            long qSize = 0;
            long before = 0;
            long after = 0;
            for (Tensor g : bucket.gradients()) {
                int n = g.dim() == 0 ? 1 : g.shape()[0];
                int m = n == 0 ? 0 : g.numel() / n;
                int r = Math.min(Math.min(n, m), state.matrixApproximationRank);
                long full = (long) n * m;
                long compressed = (long) (n + m) * r;
                before += full;
                if (g.dim() > 0 && r > 0 && compressed * state.minCompressionRate < full) {
                    matrices.add(g.reshape(n, m));
                    pSize += (long) n * r;
                    qSize += (long) m * r;
                    after += compressed;
                } else {
                    uncompressed.add(g);
                    after += full;
                }
            }
            state.count(before, after);
            flatUncompressed = flatten(uncompressed, input.dtype());
            boolean randomQ = !state.warmStart || !state.ps.containsKey(index);
            if (randomQ) {
                state.ps.put(index, kept(Tensor.zeros(input.device(), input.dtype(), Math.toIntExact(pSize))));
                state.qs.put(index, kept(Tensor.zeros(input.device(), input.dtype(), Math.toIntExact(qSize))));
            }
            pMemory = state.ps.get(index);
            qMemory = state.qs.get(index);
            slice(matrices, pMemory, qMemory, state.matrixApproximationRank, ps, qs);
            if (randomQ && !qs.isEmpty()) {
                Generator random = new Generator(state.rng.nextInt(1_000_000_000));
                qs.forEach(q -> q.copyi(Tensor.randn(random, q.dtype(), q.shape())));
            }
            qs.forEach(q -> orthogonalize(q, state.orthogonalizationEpsilon));
            for (int i = 0; i < matrices.size(); i++) {
                ps.get(i).copyi(matrices.get(i).matmul(qs.get(i)));
            }
        }
        Future<Void> uncompressedWork = uncompressed.isEmpty() ? Future.succeededFuture()
                : group.allReduce(flatUncompressed);
        Future<Void> qWork = Future.succeededFuture();
        if (!matrices.isEmpty()) {
            await(group, group.allReduce(pMemory), "the all-reduce of bucket " + index + "'s P");
            try (var ignored = Autograd.noGrad()) {
                ps.forEach(p -> orthogonalize(p, state.orthogonalizationEpsilon));
                for (int i = 0; i < matrices.size(); i++) {
                    qs.get(i).copyi(matrices.get(i).t().matmul(ps.get(i)));
                }
            }
            qWork = group.allReduce(qMemory);
        }
        int world = group.size();
        return Future.all(uncompressedWork, qWork).compose(v -> OffLoop.run("tensorbus-powersgd", () -> {
            try (var ignored = Autograd.noGrad()) {
                qMemory.divi(world);
                for (int i = 0; i < matrices.size(); i++) {
                    matrices.get(i).copyi(ps.get(i).matmul(qs.get(i).t()));
                }
                unflatten(flatUncompressed.divi(world), uncompressed);
                finish(state, bucket, inputCopy, input);
            }
            return input;
        }));
    }

    /**
     * {@code batched_powerSGD_hook}: the whole bucket as one square matrix, padded with zeros, compressed at once;
     * faster, and usually far less accurate unless the rank is 1.
     */
    static Future<Tensor> batchedHook(PowerSGDState state, ProcessGroup group, GradBucket bucket) {
        if (!state.compressing()) {
            state.maybeIncreaseIter(bucket);
            return CommHooks.allReduce().apply(group, bucket);
        }
        Tensor buffer = bucket.buffer();
        int length = buffer.numel();
        int side = (int) Math.ceil(Math.sqrt(length));
        int r = Math.max(1, Math.min(side, state.matrixApproximationRank));
        state.count(length, 2L * side * r);
        int index = bucket.index();
        Tensor padded = Tensor.zeros(buffer.device(), buffer.dtype(), side * side);
        Tensor matrix = padded.view(side, side);
        Tensor inputCopy;
        Tensor p;
        Tensor q;
        try (var ignored = Autograd.noGrad()) {
            padded.narrow(0, 0, length).copyi(buffer);
            inputCopy = addError(state, index, padded);
            if (!state.warmStart || !state.ps.containsKey(index)) {
                state.ps.put(index, kept(Tensor.zeros(buffer.device(), buffer.dtype(), side, r)));
                Generator random = new Generator(state.rng.nextInt(1_000_000_000));
                state.qs.put(index, kept(Tensor.randn(random, buffer.dtype(), side, r)));
            }
            p = state.ps.get(index);
            q = state.qs.get(index);
            orthogonalize(q, state.orthogonalizationEpsilon);
            p.copyi(matrix.matmul(q));
        }
        await(group, group.allReduce(p), "the all-reduce of bucket " + index + "'s P");
        try (var ignored = Autograd.noGrad()) {
            orthogonalize(p, state.orthogonalizationEpsilon);
            q.copyi(matrix.t().matmul(p));
        }
        int world = group.size();
        return group.allReduce(q).compose(v -> OffLoop.run("tensorbus-powersgd", () -> {
            try (var ignored = Autograd.noGrad()) {
                q.divi(world);
                matrix.copyi(p.matmul(q.t()));
                finish(state, bucket, inputCopy, padded);
            }
            return padded.narrow(0, 0, length);
        }));
    }

    /** With error feedback, adds the bucket's last error to {@code input} and answers a copy of the sum; else null. */
    private static Tensor addError(PowerSGDState state, int index, Tensor input) {
        if (!state.useErrorFeedback) {
            return null;
        }
        Tensor error = state.errors.get(index);
        if (error != null && error.numel() == input.numel()) {
            input.addi(error);
        }
        return input.clone();
    }

    private static void finish(PowerSGDState state, GradBucket bucket, Tensor inputCopy, Tensor output) {
        if (inputCopy != null) {
            state.errors.put(bucket.index(), kept(inputCopy.sub(output)));
        }
        if (!state.warmStart) {
            state.ps.remove(bucket.index());
            state.qs.remove(bucket.index());
        }
        state.maybeIncreaseIter(bucket);
    }

    /**
     * {@code t}, taken out of the training step's {@link MemoryScope}: the state outlives the step that made it.
     */
    private static Tensor kept(Tensor t) {
        MemoryScope.detach(t);
        return t;
    }

    /** Views of {@code pMemory} and {@code qMemory} shaped n x r and m x r for each n x m matrix, in order. */
    private static void slice(List<Tensor> matrices, Tensor pMemory, Tensor qMemory, int rank, List<Tensor> ps,
                              List<Tensor> qs) {
        int pAt = 0;
        int qAt = 0;
        for (Tensor matrix : matrices) {
            int n = matrix.shape()[0];
            int m = matrix.shape()[1];
            int r = Math.min(Math.min(n, m), rank);
            ps.add(pMemory.narrow(0, pAt, n * r).view(n, r));
            qs.add(qMemory.narrow(0, qAt, m * r).view(m, r));
            pAt += n * r;
            qAt += m * r;
        }
    }

    private static Tensor flatten(List<Tensor> tensors, DType dtype) {
        int total = tensors.stream().mapToInt(Tensor::numel).sum();
        Tensor flat = Tensor.zeros(tensors.isEmpty() ? Device.CPU : tensors.getFirst().device(), dtype, total);
        int at = 0;
        for (Tensor t : tensors) {
            if (t.numel() > 0) {
                flat.narrow(0, at, t.numel()).copyi(t.reshape(-1));
            }
            at += t.numel();
        }
        return flat;
    }

    private static void unflatten(Tensor flat, List<Tensor> into) {
        int at = 0;
        for (Tensor t : into) {
            if (t.numel() > 0) {
                t.copyi(flat.narrow(0, at, t.numel()).reshape(t.shape()));
            }
            at += t.numel();
        }
    }

    /**
     * Orthonormalises the columns of the n x r {@code matrix} in place, as {@code _orthogonalize} does: Gram-Schmidt
     * for ranks up to 2 (each column divided by its norm plus {@code epsilon}, then removed from the columns after it;
     * a zero column with {@code epsilon} 0 becomes NaN, as in PyTorch), and for higher ranks the Q of a Householder QR
     * factorisation (PyTorch's {@code linalg.qr}), which stays orthonormal when the matrix is rank-deficient, as a
     * zero-padded gradient is. Computed in double precision.
     */
    static void orthogonalize(Tensor matrix, double epsilon) {
        int n = matrix.shape()[0];
        int r = matrix.shape()[1];
        double[] a = matrix.toDoubleArray();
        double[] q = r <= 2 ? gramSchmidt(a, n, r, epsilon) : householderQ(a, n, r);
        matrix.copyi(Tensor.of(q, n, r).to(matrix.dtype()));
    }

    private static double[] gramSchmidt(double[] a, int n, int r, double epsilon) {
        for (int i = 0; i < r; i++) {
            double norm = 0;
            for (int row = 0; row < n; row++) {
                norm += a[row * r + i] * a[row * r + i];
            }
            double scale = Math.sqrt(norm) + epsilon;
            for (int row = 0; row < n; row++) {
                a[row * r + i] /= scale;
            }
            for (int j = i + 1; j < r; j++) {
                double dot = 0;
                for (int row = 0; row < n; row++) {
                    dot += a[row * r + i] * a[row * r + j];
                }
                for (int row = 0; row < n; row++) {
                    a[row * r + j] -= dot * a[row * r + i];
                }
            }
        }
        return a;
    }

    /** The n x r Q of the Householder QR of the row-major n x r {@code a} (which is overwritten), n >= r. */
    private static double[] householderQ(double[] a, int n, int r) {
        double[][] reflectors = new double[r][];
        for (int k = 0; k < r; k++) {
            double norm = 0;
            for (int i = k; i < n; i++) {
                norm += a[i * r + k] * a[i * r + k];
            }
            norm = Math.sqrt(norm);
            if (norm == 0) {
                continue;
            }
            double alpha = a[k * r + k];
            double[] v = new double[n - k];
            v[0] = alpha - (alpha >= 0 ? -norm : norm);
            for (int i = k + 1; i < n; i++) {
                v[i - k] = a[i * r + k];
            }
            reflect(v, a, n, r, k, k);
            reflectors[k] = v;
        }
        double[] q = new double[n * r];
        for (int j = 0; j < r; j++) {
            q[j * r + j] = 1;
        }
        for (int k = r - 1; k >= 0; k--) {
            if (reflectors[k] != null) {
                reflect(reflectors[k], q, n, r, k, 0);
            }
        }
        return q;
    }

    /** Applies I - 2 v v^T / (v^T v) to rows {@code k..n-1}, columns {@code fromColumn..r-1} of {@code m}. */
    private static void reflect(double[] v, double[] m, int n, int r, int k, int fromColumn) {
        double vv = 0;
        for (double x : v) {
            vv += x * x;
        }
        if (vv == 0) {
            return;
        }
        for (int j = fromColumn; j < r; j++) {
            double dot = 0;
            for (int i = k; i < n; i++) {
                dot += v[i - k] * m[i * r + j];
            }
            double f = 2 * dot / vv;
            for (int i = k; i < n; i++) {
                m[i * r + j] -= f * v[i - k];
            }
        }
    }

    private static void await(ProcessGroup group, Future<Void> work, String what) {
        Blocking.await(work, group.timeout().plusSeconds(5), "PowerSGD on rank " + group.globalRank(group.rank())
                + ": " + what);
    }
}
