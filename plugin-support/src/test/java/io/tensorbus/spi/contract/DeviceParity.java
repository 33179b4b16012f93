package io.tensorbus.spi.contract;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.fail;

import io.tensorbus.DType;
import io.tensorbus.Device;
import io.tensorbus.tensor.Generator;
import io.tensorbus.tensor.Tensor;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

/** What the device training suites share: random inputs, the host-against-device check, and closeness. */
final class DeviceParity {
    private DeviceParity() {
    }

    /** Standard normal float32 values of {@code shape}, the same for a seed. */
    static Tensor random(long seed, int... shape) {
        return Tensor.randn(new Generator(seed), DType.FLOAT32, shape);
    }

    /**
     * Runs {@code f} on host leaves and on copies of them on {@code dev}, weighs its output by fixed random values,
     * sums, runs backward, and checks the outputs and every input's gradient (on the device, equal to the host's).
     */
    static void check(Device dev, String what, Function<List<Tensor>, Tensor> f, Tensor... inputs) {
        List<Tensor> host = new ArrayList<>();
        List<Tensor> device = new ArrayList<>();
        for (Tensor in : inputs) {
            host.add(in.detach().clone().requiresGrad(true));
            device.add(in.detach().to(dev).requiresGrad(true));
        }
        Tensor hostOut = f.apply(host);
        Tensor deviceOut = f.apply(device);
        assertEquals(dev, deviceOut.device(), what + " stays on the device");
        assertClose(hostOut, deviceOut.cpu(), what + " forward");
        Tensor weights = random(99, hostOut.shape());
        hostOut.mul(weights).sum().backward();
        deviceOut.mul(weights.to(dev)).sum().backward();
        for (int i = 0; i < inputs.length; i++) {
            assertNotNull(device.get(i).grad(), what + ": input " + i + " got no gradient on the device");
            assertEquals(dev, device.get(i).grad().device(), what + ": gradient " + i + " on the device");
            assertClose(host.get(i).grad(), device.get(i).grad().cpu(), what + " gradient of input " + i);
        }
    }

    /** Equal within float32 rounding: relative 2e-5 of the larger magnitudes, absolute 1e-5. */
    static void assertClose(Tensor expected, Tensor actual, String what) {
        assertClose(expected, actual, 2e-5, what);
    }

    /**
     * Equal within {@code relative} of the expected element or of the largest expected magnitude divided by 100
     * (so values near zero after cancellation are judged against the tensor's scale), and absolutely 1e-5.
     */
    static void assertClose(Tensor expected, Tensor actual, double relative, String what) {
        assertArrayEquals(expected.shape(), actual.shape(), what + ": shape");
        assertEquals(expected.dtype(), actual.dtype(), what + ": dtype");
        double[] e = expected.to(DType.FLOAT64).toDoubleArray();
        double[] a = actual.to(DType.FLOAT64).toDoubleArray();
        double scale = 0;
        for (double v : e) {
            scale = Double.isFinite(v) ? Math.max(scale, Math.abs(v)) : scale;
        }
        for (int i = 0; i < e.length; i++) {
            double allowed = 1e-5 + relative * Math.max(Math.abs(e[i]), scale / 100);
            if (Double.isNaN(e[i]) ? !Double.isNaN(a[i]) : Math.abs(e[i] - a[i]) > allowed) {
                fail(what + ": element " + i + " is " + a[i] + ", expected " + e[i]);
            }
        }
    }
}
