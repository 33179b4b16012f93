package io.tensorbus.distributed.algorithms;

import io.tensorbus.DType;
import io.tensorbus.distributed.ProcessGroup;
import io.tensorbus.internal.distributed.OffLoop;
import io.tensorbus.tensor.Tensor;
import io.vertx.core.Future;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The quantization hooks of PyTorch's {@code quantization_hooks} (which run on CUDA only there): each rank quantizes
 * its bucket to 8-bit unsigned integers with the scale and zero point of a min-max observer (one pair for the whole
 * bucket, or one per channel of {@code bucketSize} elements), all-gathers the bytes and the pairs, and every rank
 * dequantizes all of them and averages. The bytes travel four to an int32 element, a quarter of float32's size.
 * Both all-gathers are issued in the hook's body (a rank's own scale is known locally); the dequantization runs on
 * a virtual thread.
 */
final class Quantization {
    private static final int QUANT_MAX = 255;
    private static final float EPS = Math.ulp(1.0f);

    private Quantization() {
    }

    /**
     * The hook over channels of {@code channel} elements; the whole bucket as one channel when {@code channel} is 0.
     * A per-channel bucket is padded with zeros to a whole number of channels plus, when it already is one, a
     * channel more, as PyTorch pads it.
     */
    static Future<Tensor> hook(ProcessGroup group, GradBucket bucket, int channel) {
        float[] x = bucket.buffer().to(DType.FLOAT32).toFloatArray();
        int length = x.length;
        int width = channel == 0 ? Math.max(1, length) : channel;
        int channels = channel == 0 ? 1 : length / channel + 1;
        float[] padded = Arrays.copyOf(x, channels * width);
        float[] scaleAndZero = new float[2 * channels];
        byte[] q = new byte[padded.length];
        for (int c = 0; c < channels; c++) {
            observe(padded, c * width, width, scaleAndZero, c, channels);
            quantize(padded, c * width, width, scaleAndZero[c], scaleAndZero[channels + c], q);
        }
        int world = group.size();
        Tensor myParams = Tensor.of(scaleAndZero);
        Tensor myBytes = Tensor.of(pack(q));
        List<Tensor> params = zerosLike(myParams, world);
        List<Tensor> bytes = zerosLike(myBytes, world);
        Future<Void> paramsWork = group.allGather(params, myParams);
        Future<Void> bytesWork = group.allGather(bytes, myBytes);
        return Future.all(paramsWork, bytesWork).compose(v -> OffLoop.run("tensorbus-quantization", () -> {
            float[] sum = new float[padded.length];
            for (int r = 0; r < world; r++) {
                dequantizeInto(unpack(bytes.get(r).toIntArray(), padded.length), params.get(r).toFloatArray(), width,
                        channels, sum);
            }
            float[] out = new float[length];
            for (int i = 0; i < length; i++) {
                out[i] = sum[i] / world;
            }
            return Tensor.of(out);
        }));
    }

    /**
     * A min-max observer's {@code calculate_qparams} for quint8 over {@code width} elements from {@code from}: the
     * range widened to hold 0, scale = range / 255 (at least float32's epsilon), zero point = -round(min / scale)
     * clamped to [0, 255]. Stores the scale at {@code c} and the zero point at {@code channels + c}.
     */
    private static void observe(float[] x, int from, int width, float[] out, int c, int channels) {
        float min = 0;
        float max = 0;
        for (int i = from; i < from + width; i++) {
            min = Math.min(min, x[i]);
            max = Math.max(max, x[i]);
        }
        float scale = Math.max((max - min) / (float) QUANT_MAX, EPS);
        float zero = (float) Math.min(QUANT_MAX, Math.max(0, -Math.rint(min / scale)));
        out[c] = scale;
        out[channels + c] = zero;
    }

    /** {@code clamp(round(x / scale) + zero, 0, 255)}, rounding half to even as {@code torch.round}. */
    private static void quantize(float[] x, int from, int width, float scale, float zero, byte[] q) {
        for (int i = from; i < from + width; i++) {
            float y = (float) Math.rint(x[i] / scale) + zero;
            q[i] = (byte) (int) Math.min(QUANT_MAX, Math.max(0, y));
        }
    }

    private static void dequantizeInto(byte[] q, float[] scaleAndZero, int width, int channels, float[] sum) {
        for (int c = 0; c < channels; c++) {
            float scale = scaleAndZero[c];
            float zero = scaleAndZero[channels + c];
            for (int i = c * width; i < (c + 1) * width; i++) {
                sum[i] += scale * ((q[i] & 0xff) - zero);
            }
        }
    }

    /** Four bytes to an int, little-endian, the last int padded with zeros. */
    private static int[] pack(byte[] q) {
        int[] out = new int[(q.length + 3) / 4];
        for (int i = 0; i < q.length; i++) {
            out[i / 4] |= (q[i] & 0xff) << (8 * (i % 4));
        }
        return out;
    }

    private static byte[] unpack(int[] packed, int length) {
        byte[] q = new byte[length];
        for (int i = 0; i < length; i++) {
            q[i] = (byte) (packed[i / 4] >>> (8 * (i % 4)));
        }
        return q;
    }

    private static List<Tensor> zerosLike(Tensor t, int n) {
        List<Tensor> out = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            out.add(Tensor.zeros(t.dtype(), t.numel()));
        }
        return out;
    }
}
