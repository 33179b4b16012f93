package io.tensorbus.backend.nccl;

import io.tensorbus.DType;
import io.tensorbus.c10d.ReduceOp;
import io.tensorbus.internal.tensor.DeviceTensorKernels;
import io.tensorbus.internal.tensor.Philox;
import io.tensorbus.spi.KernelSource;
import io.tensorbus.spi.support.DeviceKernels;
import io.tensorbus.spi.support.HostReductions;
import java.io.IOException;
import java.io.InputStream;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.function.DoubleUnaryOperator;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The CUDA dialect of the device kernels, checked without a GPU: g++ compiles both programs as C++ against a
 * few lines that stand in for CUDA's built-ins ({@code cuda-on-host.h}), and runs them on the host, thread after
 * thread. The code CUDA adds to the shared kernels (halves in software, the saturating float-to-long cast) and
 * the collectives' reductions must then give Java's results bit for bit. What this cannot check is NVRTC itself
 * and the device's own arithmetic; {@code docs/gpu.md} says how to run the CUDA suites on a GPU.
 */
class CudaKernelSourceTest {
    private static final long SEED = 0x5eed_c0dal;

    @BeforeAll
    static void needsACppCompiler() {
        assumeTrue(compilerFound(), "g++ is not installed: the CUDA kernel source is not checked on this machine");
    }

    @Test
    void bothCudaProgramsCompileAsCpp(@TempDir Path dir) throws Exception {
        compile(dir, "collectives", DeviceKernels.collectives(DeviceKernels.Dialect.CUDA, true),
                "int main() { return 0; }");
        compile(dir, "tensors", DeviceKernels.tensors(DeviceKernels.Dialect.CUDA), "int main() { return 0; }");
    }

    @Test
    void theTensorProgramsOfCoreCompileAsCpp(@TempDir Path dir) throws Exception {
        for (KernelSource program : List.of(DeviceTensorKernels.program(DType.FLOAT32),
                DeviceTensorKernels.program(DType.FLOAT64), DeviceTensorKernels.copies())) {
            compile(dir, program.name(), DeviceKernels.program(DeviceKernels.Dialect.CUDA, program),
                    "int main() { return 0; }");
        }
    }

    @Test
    void cudaFunctionsAndStridedCopiesOfCoreMatchJava(@TempDir Path dir) throws Exception {
        String main = """
                int main(int argc, char **argv) {
                    size_t fs;
                    float *x = (float *) read_file(argv[1], &fs);
                    size_t n = fs / 4;
                    float *y = (float *) malloc(fs * 4);
                    for (int op = 0; op < 4; op++) LAUNCH(n, unary(x, 0, y, op * n, n, op + 1, 0.0, 0.0));
                    write_file(argv[2], y, fs * 4);
                    unsigned int *t = (unsigned int *) malloc(fs);
                    LAUNCH(n, copy_strided_4((const unsigned int *) x, 0, t, 0, n, 2, 10, n / 10, 1, 1, 1, 1,
                            1, 10, 0, 0, 0, 0, n / 10, 1, 0, 0, 0, 0));
                    write_file(argv[3], t, fs);
                    return 0;
                }
                """;
        String source = DeviceKernels.program(DeviceKernels.Dialect.CUDA, DeviceTensorKernels.program(DType.FLOAT32))
                + DeviceTensorKernels.copies().source();
        Path exe = compile(dir, "functions", source, main);
        float[] x = new float[200];
        Random random = new Random(SEED);
        for (int i = 0; i < x.length; i++) {
            x[i] = (float) (random.nextGaussian() * 3);
        }
        Path in = write(dir.resolve("x.bin"), MemorySegment.ofArray(x));
        run(exe, in, dir.resolve("y.bin"), dir.resolve("t.bin"));
        int[] y = ints(dir.resolve("y.bin"));
        DoubleUnaryOperator[] javas = {Math::exp, v -> Math.log(v), Math::sqrt, Math::abs};
        for (int op = 0; op < javas.length; op++) {
            for (int i = 0; i < x.length; i++) {
                float want = (float) javas[op].applyAsDouble(x[i]);
                float got = Float.intBitsToFloat(y[op * x.length + i]);
                if (!(Float.isNaN(want) && Float.isNaN(got))) {
                    assertEquals(want, got, Math.ulp(want), "function " + op + " of " + x[i]);
                }
            }
        }
        int[] t = ints(dir.resolve("t.bin"));
        for (int r = 0; r < 10; r++) {
            for (int c = 0; c < 20; c++) {
                assertEquals(Float.floatToRawIntBits(x[c * 10 + r]), t[r * 20 + c], "transpose at " + r + "," + c);
            }
        }
    }

    @Test
    void cudaDropoutMasksAreTheHostsPhiloxDraws(@TempDir Path dir) throws Exception {
        String main = """
                int main(int argc, char **argv) {
                    size_t n = 1001;
                    float *m = (float *) malloc(n * 4);
                    LAUNCH(n, dropout_mask(m, 0, n, 0x9E3779B97F4A7C15ULL, 5, 0.7, 1.0 / 0.7));
                    write_file(argv[1], m, n * 4);
                    return 0;
                }
                """;
        String source = DeviceKernels.program(DeviceKernels.Dialect.CUDA, DeviceTensorKernels.program(DType.FLOAT32));
        Path exe = compile(dir, "dropout", source, main);
        run(exe, dir.resolve("m.bin"));
        int[] m = ints(dir.resolve("m.bin"));
        for (int i = 0; i < m.length; i++) {
            float want = Philox.uniform(0x9E3779B97F4A7C15L, 5, i) < 0.7 ? (float) (1.0 / 0.7) : 0f;
            assertEquals(want, Float.intBitsToFloat(m[i]), 0f, "mask element " + i);
        }
    }

    @Test
    void cudaIndexKernelsTakePutAndAddByOffset(@TempDir Path dir) throws Exception {
        String main = """
                int main(int argc, char **argv) {
                    float src[5] = {1, 2, 3, 4, 5};
                    long offs[5] = {4, 0, 4, 2, 0};
                    float out[15] = {0};
                    LAUNCH(5, take_4((const unsigned int *) src, 0, offs, 0, (unsigned int *) out, 0, 5));
                    long targets[3] = {0, 2, 4};
                    long starts[4] = {0, 2, 3, 5};
                    long order[5] = {1, 4, 3, 0, 2};
                    out[5] = 0.5f;
                    LAUNCH(3, add_at(out, 5, src, 0, targets, 0, starts, 0, order, 0, 3));
                    long to[2] = {1, 3};
                    long from[2] = {4, 0};
                    LAUNCH(2, put_4((unsigned int *) out, 10, to, 0, (const unsigned int *) src, 0, from, 0, 2));
                    write_file(argv[1], out, sizeof(out));
                    return 0;
                }
                """;
        String source = DeviceKernels.program(DeviceKernels.Dialect.CUDA, DeviceTensorKernels.program(DType.FLOAT32))
                + DeviceTensorKernels.copies().source();
        Path exe = compile(dir, "index", source, main);
        run(exe, dir.resolve("out.bin"));
        int[] got = ints(dir.resolve("out.bin"));
        float[] want = {5, 1, 5, 3, 1, 0.5f + 2 + 5, 0, 4, 0, 1 + 3, 0, 5, 0, 1, 0};
        for (int i = 0; i < want.length; i++) {
            assertEquals(want[i], Float.intBitsToFloat(got[i]), 0f, "element " + i);
        }
    }

    @Test
    void halvesAndSaturatingCastsInTheCudaPreludeAreJavas(@TempDir Path dir) throws Exception {
        String main = """
                int main(int argc, char **argv) {
                    size_t fs, ds;
                    unsigned int *f = (unsigned int *) read_file(argv[1], &fs);
                    double *d = (double *) read_file(argv[2], &ds);
                    size_t nf = fs / 4, nd = ds / 8;
                    ushort *h = (ushort *) malloc(nf * 2 + 2);
                    for (size_t i = 0; i < nf; i++) h[i] = float_to_half_rte(__uint_as_float(f[i]));
                    write_file(argv[3], h, nf * 2);
                    unsigned int *back = (unsigned int *) malloc(65536 * 4);
                    for (unsigned int i = 0; i < 65536; i++) back[i] = __float_as_uint(half_to_float((ushort) i));
                    write_file(argv[4], back, 65536 * 4);
                    long *l = (long *) malloc(nd * 8 + 8);
                    for (size_t i = 0; i < nd; i++) l[i] = convert_long_sat_rtz(d[i]);
                    write_file(argv[5], l, nd * 8);
                    ushort *c = (ushort *) malloc(nf * 2 + 2);
                    LAUNCH(nf, %s((const float *) f, 0, c, 0, nf));
                    ushort *sum = (ushort *) malloc(nf * 2 + 2);
                    LAUNCH(nf, %s(c, 0, c, 0, sum, 0, nf, 1, 0, 0.0, 0));
                    write_file(argv[6], sum, nf * 2);
                    return 0;
                }
                """.formatted(DeviceKernels.castName(DType.FLOAT32, DType.FLOAT16),
                DeviceKernels.elementwiseName(DType.FLOAT16));
        Path exe = compile(dir, "tensors", DeviceKernels.tensors(DeviceKernels.Dialect.CUDA), main);
        float[] floats = interestingFloats();
        double[] doubles = interestingDoubles();
        Path fIn = write(dir.resolve("f.bin"), MemorySegment.ofArray(floats));
        Path dIn = write(dir.resolve("d.bin"), MemorySegment.ofArray(doubles));
        run(exe, fIn, dIn, dir.resolve("h.bin"), dir.resolve("back.bin"), dir.resolve("l.bin"), dir.resolve("sum.bin"));

        short[] halves = shorts(dir.resolve("h.bin"));
        short[] sums = shorts(dir.resolve("sum.bin"));
        for (int i = 0; i < floats.length; i++) {
            float f = floats[i];
            short want = Float.floatToFloat16(f);
            assertSameHalf(want, halves[i], "float_to_half_rte(" + f + ")");
            float x = Float.float16ToFloat(halves[i]);
            assertSameHalf(Float.floatToFloat16(x + x), sums[i], "half " + x + " + itself");
        }
        int[] back = ints(dir.resolve("back.bin"));
        for (int i = 0; i < 65536; i++) {
            float want = Float.float16ToFloat((short) i);
            float got = Float.intBitsToFloat(back[i]);
            if (!(Float.isNaN(want) && Float.isNaN(got))) {
                assertEquals(Float.floatToRawIntBits(want), back[i], "half_to_float(0x" + Integer.toHexString(i) + ")");
            }
        }
        long[] longs = longs(dir.resolve("l.bin"));
        for (int i = 0; i < doubles.length; i++) {
            assertEquals((long) doubles[i], longs[i], "convert_long_sat_rtz(" + doubles[i] + ")");
        }
    }

    @Test
    void cudaReductionsAndDivisionsMatchTheHostsForEveryDtypeAndOp(@TempDir Path dir) throws Exception {
        StringBuilder dispatch = new StringBuilder();
        for (DType t : DType.values()) {
            String c = cType(t);
            dispatch.append("    if (!strcmp(argv[1], \"").append(DeviceKernels.reduceName(t)).append("\")) LAUNCH(n, ")
                    .append(DeviceKernels.reduceName(t)).append("((").append(c).append(" *) acc, 0, (const ").append(c)
                    .append(" *) src, 0, n, op));\n");
            if (t.isFloatingPoint()) {
                dispatch.append("    if (!strcmp(argv[1], \"").append(DeviceKernels.divideName(t))
                        .append("\")) LAUNCH(n, ").append(DeviceKernels.divideName(t)).append("((").append(c)
                        .append(" *) acc, 0, n, op));\n");
            }
        }
        String main = """
                int main(int argc, char **argv) {
                    int op = atoi(argv[2]);
                    size_t as, ss;
                    void *acc = read_file(argv[3], &as);
                    void *src = read_file(argv[4], &ss);
                    size_t n = (size_t) atol(argv[6]);
                %s
                    write_file(argv[5], acc, as);
                    return 0;
                }
                """.formatted(dispatch);
        Path exe = compile(dir, "collectives", DeviceKernels.collectives(DeviceKernels.Dialect.CUDA, true), main);
        Random random = new Random(SEED);
        int n = 1000;
        int checked = 0;
        for (DType t : DType.values()) {
            byte[] a = values(t, n, random);
            byte[] b = values(t, n, random);
            for (ReduceOp op : ReduceOp.plain()) {
                if (!supports(op, t)) {
                    continue;
                }
                MemorySegment want = MemorySegment.ofArray(a.clone());
                HostReductions.reduceInto(op, t, want, MemorySegment.ofArray(b));
                byte[] got = runKernel(exe, dir, DeviceKernels.reduceName(t), op.code(), a, b, n);
                assertSameElements(t, want.toArray(ValueLayout.JAVA_BYTE), got, DeviceKernels.reduceName(t) + " " + op);
                checked++;
            }
            if (t.isFloatingPoint()) {
                MemorySegment want = MemorySegment.ofArray(a.clone());
                HostReductions.divide(t, want, 3);
                byte[] got = runKernel(exe, dir, DeviceKernels.divideName(t), 3, a, b, n);
                assertSameElements(t, want.toArray(ValueLayout.JAVA_BYTE), got, DeviceKernels.divideName(t) + " by 3");
                checked++;
            }
        }
        assertEquals(45, checked, "every dtype's reductions and divisions were run");
    }

    /**
     * Halves equal bit for bit, except that any NaN equals any NaN: Java's own {@link Float#floatToFloat16} keeps
     * a NaN's payload when interpreted and quiets it when the JIT uses the CPU's conversion instruction, and which
     * of two NaN operands a product returns depends on the order the JIT picked, so the host has no single answer
     * to match there.
     */
    private static void assertSameHalf(short want, short got, String what) {
        boolean bothNaN = Float.isNaN(Float.float16ToFloat(want)) && Float.isNaN(Float.float16ToFloat(got));
        if (!bothNaN) {
            assertEquals(want, got, what);
        }
    }

    private static void assertSameElements(DType t, byte[] want, byte[] got, String what) {
        if (t != DType.FLOAT16) {
            assertArrayEquals(want, got, what);
            return;
        }
        MemorySegment w = MemorySegment.ofArray(want);
        MemorySegment g = MemorySegment.ofArray(got);
        assertEquals(want.length, got.length, what);
        for (int i = 0; i < want.length / 2; i++) {
            assertSameHalf(w.getAtIndex(ValueLayout.JAVA_SHORT_UNALIGNED, i),
                    g.getAtIndex(ValueLayout.JAVA_SHORT_UNALIGNED, i),
                    what + " element " + i);
        }
    }

    // ---- values ----------------------------------------------------------------------------------------------

    private static float[] interestingFloats() {
        List<Float> v = new ArrayList<>(List.of(0f, -0f, 1f, -1f, Float.POSITIVE_INFINITY, Float.NEGATIVE_INFINITY,
                Float.NaN, Float.intBitsToFloat(0x7fa00001), Float.intBitsToFloat(0xffc01234), 65504f, 65519.99f,
                65520f, -65520f, 0x1p-24f, 0x1p-25f, Math.nextUp(0x1p-25f), 0x1.8p-24f, 0x1p-14f,
                Math.nextDown(0x1p-14f), 1f + 0x1p-11f, 1f + 0x1p-10f + 0x1p-11f, 0x1.ffep-15f, Float.MIN_VALUE,
                Float.MAX_VALUE, 3.14159f));
        Random random = new Random(SEED);
        for (int i = 0; i < 200_000; i++) {
            v.add(i % 2 == 0 ? Float.intBitsToFloat(random.nextInt()) : (random.nextFloat() - 0.5f) * 140000f
                    * (float) Math.pow(2, -random.nextInt(40)));
        }
        float[] out = new float[v.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = v.get(i);
        }
        return out;
    }

    private static double[] interestingDoubles() {
        double[] fixed = {0, -0.0, 1.5, -1.5, 2.9999, -2.9999, Double.NaN, Double.POSITIVE_INFINITY,
                Double.NEGATIVE_INFINITY, 0x1p63, -0x1p63, Math.nextDown(0x1p63), Math.nextUp(-0x1p63), 9.3e18, -9.3e18,
                Double.MAX_VALUE, -Double.MAX_VALUE, Double.MIN_VALUE, 4.5e15};
        Random random = new Random(SEED + 1);
        double[] out = Arrays.copyOf(fixed, fixed.length + 10_000);
        for (int i = fixed.length; i < out.length; i++) {
            out[i] = Double.longBitsToDouble(random.nextLong()) % 1e20;
        }
        return out;
    }

    /** {@code n} elements of {@code t}: random bits, with zeros, NaN and equal pairs among them. */
    private static byte[] values(DType t, int n, Random random) {
        byte[] bytes = new byte[n * t.byteSize()];
        random.nextBytes(bytes);
        MemorySegment s = MemorySegment.ofArray(bytes);
        for (int i = 0; i < n; i += 7) {
            // Signed zeros and small values, where MAX/MIN order -0 below +0 and bools test != 0.
            switch (t) {
                case FLOAT32 -> s.setAtIndex(ValueLayout.JAVA_FLOAT_UNALIGNED, i, i % 14 == 0 ? -0f : 0f);
                case FLOAT64 -> s.setAtIndex(ValueLayout.JAVA_DOUBLE_UNALIGNED, i, i % 14 == 0 ? -0.0 : 2.5);
                case FLOAT16, BFLOAT16 -> s.setAtIndex(ValueLayout.JAVA_SHORT_UNALIGNED, i,
                        (short) (i % 14 == 0 ? 0x8000 : 0));
                case INT32 -> s.setAtIndex(ValueLayout.JAVA_INT_UNALIGNED, i, i - 500);
                case INT64 -> s.setAtIndex(ValueLayout.JAVA_LONG_UNALIGNED, i, Long.MIN_VALUE + i);
                case BOOL -> s.set(ValueLayout.JAVA_BYTE, i, (byte) 0);
            }
        }
        return bytes;
    }

    private static boolean supports(ReduceOp op, DType t) {
        try {
            op.checkSupports(t);
            return true;
        } catch (IllegalArgumentException e) {
            return false;
        }
    }

    private static String cType(DType t) {
        return switch (t) {
            case FLOAT32 -> "float";
            case FLOAT64 -> "double";
            case FLOAT16, BFLOAT16 -> "ushort";
            case INT32 -> "int";
            case INT64 -> "long";
            case BOOL -> "uchar";
        };
    }

    // ---- g++ -------------------------------------------------------------------------------------------------

    private static boolean compilerFound() {
        try {
            Process p = new ProcessBuilder("g++", "--version").redirectErrorStream(true).start();
            p.getInputStream().readAllBytes();
            return p.waitFor(30, TimeUnit.SECONDS) && p.exitValue() == 0;
        } catch (IOException | InterruptedException e) {
            return false;
        }
    }

    /** Compiles {@code source} (with the host stand-ins for CUDA) and {@code main} into an executable. */
    private static Path compile(Path dir, String name, String source, String main) throws Exception {
        try (InputStream header = CudaKernelSourceTest.class.getResourceAsStream("/cuda-on-host.h")) {
            Files.write(dir.resolve("cuda-on-host.h"), header.readAllBytes());
        }
        Path cpp = dir.resolve(name + ".cpp");
        Files.writeString(cpp, "#include \"cuda-on-host.h\"\n" + source + "\n" + main);
        Path exe = dir.resolve(name);
        exec(List.of("g++", "-std=c++17", "-O1", "-ffp-contract=off", "-fno-fast-math", "-w", "-o", exe.toString(),
                cpp.toString()), "compiling the CUDA " + name + " kernels as C++");
        return exe;
    }

    private static void run(Path exe, Path... args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of(exe.toString()));
        for (Path a : args) {
            cmd.add(a.toString());
        }
        exec(cmd, "running " + exe.getFileName());
    }

    private static byte[] runKernel(Path exe, Path dir, String kernel, int op, byte[] acc, byte[] src, int n)
            throws Exception {
        Path a = write(dir.resolve("acc.bin"), MemorySegment.ofArray(acc));
        Path s = write(dir.resolve("src.bin"), MemorySegment.ofArray(src));
        Path out = dir.resolve("out.bin");
        exec(List.of(exe.toString(), kernel, Integer.toString(op), a.toString(), s.toString(), out.toString(),
                Integer.toString(n)), kernel);
        return Files.readAllBytes(out);
    }

    private static void exec(List<String> cmd, String what) throws Exception {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String output = new String(p.getInputStream().readAllBytes());
        if (!p.waitFor(120, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError(what + " did not finish in 120 s");
        }
        assertEquals(0, p.exitValue(), () -> what + " failed:\n" + output);
    }

    private static Path write(Path file, MemorySegment bytes) throws IOException {
        Files.write(file, bytes.toArray(ValueLayout.JAVA_BYTE));
        return file;
    }

    private static short[] shorts(Path file) throws IOException {
        ByteBuffer b = ByteBuffer.wrap(Files.readAllBytes(file)).order(ByteOrder.nativeOrder());
        short[] out = new short[b.remaining() / 2];
        b.asShortBuffer().get(out);
        return out;
    }

    private static int[] ints(Path file) throws IOException {
        ByteBuffer b = ByteBuffer.wrap(Files.readAllBytes(file)).order(ByteOrder.nativeOrder());
        int[] out = new int[b.remaining() / 4];
        b.asIntBuffer().get(out);
        return out;
    }

    private static long[] longs(Path file) throws IOException {
        ByteBuffer b = ByteBuffer.wrap(Files.readAllBytes(file)).order(ByteOrder.nativeOrder());
        long[] out = new long[b.remaining() / 8];
        b.asLongBuffer().get(out);
        return out;
    }
}
