package io.tensorbus.spi.contract;

import io.tensorbus.DType;
import io.tensorbus.Device;
import io.tensorbus.c10d.JobSecret;
import io.tensorbus.c10d.CollectiveMismatchException;
import io.tensorbus.c10d.CommunicationException;
import io.tensorbus.c10d.CommunicationTimeoutException;
import io.tensorbus.c10d.PeerLostException;
import io.tensorbus.c10d.ReduceOp;
import io.tensorbus.spi.Backend;
import io.tensorbus.spi.BackendProvider;
import io.tensorbus.spi.DeviceBuffer;
import io.tensorbus.spi.DeviceRuntime;
import io.tensorbus.spi.DeviceRuntimeProvider;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.function.IntFunction;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static io.tensorbus.spi.contract.Buffers.get;
import static io.tensorbus.spi.contract.Buffers.getLong;
import static io.tensorbus.spi.contract.Buffers.put;
import static io.tensorbus.spi.contract.Buffers.putLong;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * The contract every {@link Backend} keeps, run by each backend module (extend this class and return the
 * provider). Ranks are backends in this JVM sharing a {@link MemoryStore}. Every wait has a deadline: a
 * backend that hangs fails the test that waits for it, not the build.
 *
 * <p>Sizes: "small" buffers are at most 64 KiB (where a backend typically uses latency-optimal algorithms),
 * "large" ones above (bandwidth-optimal, pipelined); both are covered for every collective, with element
 * counts that are not multiples of the world size, smaller than it, and zero.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 120, unit = TimeUnit.SECONDS)
public abstract class BackendContractTest {
    /** How long one operation of a healthy group may take in these tests, in seconds. */
    protected static final long AWAIT_SECONDS = 60;
    /** How quickly an operation of a broken group must fail, in seconds. */
    protected static final long FAIL_FAST_SECONDS = 5;
    /** The boundary between small and large buffers, in bytes. */
    protected static final long SMALL_BYTES = 64 * 1024;
    /** The group timeout of the tests that wait for a timeout. */
    protected static final Duration SHORT_TIMEOUT = Duration.ofSeconds(2);

    protected Vertx vertx;

    /** The provider under test. */
    protected abstract BackendProvider provider();

    /** Backend settings for the tests (none by default). */
    protected Map<String, String> properties() {
        return Map.of();
    }

    @BeforeAll
    void startVertx() {
        vertx = Vertx.vertx();
    }

    @AfterAll
    void stopVertx() throws Exception {
        vertx.close().await(10, TimeUnit.SECONDS);
    }

    protected Ranks ranks(int n) throws Exception {
        return ranks(n, Duration.ofSeconds(20));
    }

    /** {@code n} ranks whose operations time out after {@code timeout}. */
    protected Ranks ranks(int n, Duration timeout) throws Exception {
        if (vertxPerRank()) {
            return Ranks.createOnOwnVertx(provider(), n, timeout, properties(), JobSecret.random(), placement());
        }
        return Ranks.create(provider(), vertx, n, timeout, properties(), JobSecret.random(), placement());
    }

    /**
     * True to give each rank a Vert.x of its own, as {@code tensorbus launch --ranks-as-threads} runs a node's ranks
     * (event loops, timers and the collective threads then belong to one rank each); false (the default) shares
     * one among the ranks, as {@code Distributed.spawn} does.
     */
    protected boolean vertxPerRank() {
        return false;
    }

    /**
     * How the tests' host buffers reach the backend: unchanged by default; a device backend returns
     * {@link #onDevice(Device)} so that the whole contract runs on its device memory.
     */
    protected UnaryOperator<Backend> placement() {
        return UnaryOperator.identity();
    }

    /**
     * Stages every buffer on {@code device}: copied there before each operation and back after it, through the
     * device's {@link DeviceRuntimeProvider runtime}.
     */
    protected static UnaryOperator<Backend> onDevice(Device device) {
        DeviceRuntime runtime = DeviceRuntimeProvider.of(device);
        return b -> new DeviceStagedBackend(b, runtime, device);
    }

    /**
     * Stages every rank's buffers on its own device of {@code type}, rank r on device r: for backends such as
     * NCCL that refuse two ranks on one device.
     */
    protected static UnaryOperator<Backend> onDevicePerRank(String type) {
        DeviceRuntime runtime = DeviceRuntimeProvider.of(new Device(type, 0));
        return b -> new DeviceStagedBackend(b, runtime, new Device(type, b.rank()));
    }

    /**
     * True when the backend's point-to-point messages are matched by tag, may be received from any source,
     * complete their sends before the receives are posted and check the receiver's size and dtype, as the tcp
     * backend's do. NCCL's do none of this (a send waits for its receive, and sizes must agree): its suite returns
     * false, and the tests of these properties are skipped for it.
     */
    protected boolean fullPointToPoint() {
        return true;
    }

    private void assumeFullPointToPoint() {
        Assumptions.assumeTrue(fullPointToPoint(), "the backend's point-to-point messages are not matched by tag, "
                + "buffered or checked");
    }

    protected static DeviceBuffer floats(long n, IntFunction<Float> value) {
        DeviceBuffer b = Buffers.vector(DType.FLOAT32, n);
        for (int i = 0; i < n; i++) {
            b.segment().setAtIndex(ValueLayout.JAVA_FLOAT_UNALIGNED, i, value.apply(i));
        }
        return b;
    }

    protected static float at(DeviceBuffer b, long i) {
        return b.segment().getAtIndex(ValueLayout.JAVA_FLOAT_UNALIGNED, i);
    }

    /** Runs {@code op} on every rank at once and waits for all. */
    protected static <T> List<T> onAll(Ranks ranks, IntFunction<Future<T>> op) throws Exception {
        List<Future<T>> fs = new ArrayList<>();
        for (int r = 0; r < ranks.size(); r++) {
            fs.add(op.apply(r));
        }
        return awaitAll(fs);
    }

    protected static <T> List<T> awaitAll(List<Future<T>> fs) throws Exception {
        List<T> out = new ArrayList<>();
        for (Future<T> f : fs) {
            out.add(f.await(AWAIT_SECONDS, TimeUnit.SECONDS));
        }
        return out;
    }

    /**
     * Every rank at one point of its call order, the latch the ordering cases use instead of sleeping: a rank
     * starts its calls in the order it makes them (as c10d does), so once every rank has left this barrier, what
     * a rank called before it is posted, and what it sent before it travelled ahead of the barrier's own frames.
     */
    protected static void allReach(Ranks ranks) throws Exception {
        List<Future<Void>> fs = new ArrayList<>();
        for (int r = 0; r < ranks.size(); r++) {
            fs.add(ranks.get(r).barrier());
        }
        awaitAll(fs);
    }

    /** The failure of {@code f}, which must fail within {@code seconds}: neither succeed nor hang. */
    protected static Throwable failureOf(Future<?> f, long seconds, String what) {
        try {
            f.await(seconds, TimeUnit.SECONDS);
        } catch (Throwable t) {
            if (!f.isComplete()) {
                fail(what + " neither failed nor completed within " + seconds + " s: it hangs");
            }
            return f.cause();
        }
        return fail(what + " succeeded but should have failed");
    }

    /** Asserts that {@code text} contains every one of {@code parts}. */
    protected static void assertMentions(String text, String... parts) {
        for (String p : parts) {
            assertTrue(text != null && text.contains(p), "expected the message to mention '" + p + "': " + text);
        }
    }

    /** Asserts that {@code actual} holds exactly {@code expected}'s bytes, naming the first differing element. */
    protected static void assertSameBytes(DeviceBuffer expected, DeviceBuffer actual, String what) {
        assertEquals(expected.byteSize(), actual.byteSize(), what + ": byte size");
        long at = Buffers.mismatch(expected, actual);
        if (at >= 0) {
            long i = at / expected.dtype().byteSize();
            fail(what + ": element " + i + " of " + expected.numel() + " is " + get(actual, i) + ", expected "
                    + get(expected, i));
        }
    }

    /** As {@link #assertSameBytes} but any NaN matches any NaN (payload bits may differ). */
    protected static void assertSameValues(DeviceBuffer expected, DeviceBuffer actual, String what) {
        for (long i = 0; i < expected.numel(); i++) {
            double e = get(expected, i);
            double a = get(actual, i);
            if (Double.isNaN(e) ? !Double.isNaN(a) : Double.doubleToRawLongBits(e) != Double.doubleToRawLongBits(a)) {
                fail(what + ": element " + i + " of " + expected.numel() + " is " + a + ", expected " + e);
            }
        }
    }

    /** An element count near {@code approx} that no world size of 2, 3 or 4 divides. */
    protected static long awkward(long approx) {
        long n = approx;
        while (n % 2 == 0 || n % 3 == 0) {
            n++;
        }
        return n;
    }

    /** Distinct, valid per-rank contents (bools stay 0/1): rank {@code rank}'s values, varied by {@code salt}. */
    protected static DeviceBuffer filled(DType dtype, long n, int rank, long salt) {
        DeviceBuffer b = Buffers.vector(dtype, n);
        Reference.fill(b, ReduceOp.MAX, rank, 4, salt);
        return b;
    }

    // ---- allReduce ---------------------------------------------------------------------------------------

    private void checkAllReduce(Ranks ranks, DType dtype, ReduceOp op, long n) throws Exception {
        int world = ranks.size();
        List<DeviceBuffer> bufs = new ArrayList<>();
        for (int r = 0; r < world; r++) {
            bufs.add(Reference.input(dtype, op, r, world, n));
        }
        DeviceBuffer expected = Reference.reduce(op, bufs);
        onAll(ranks, r -> ranks.get(r).allReduce(bufs.get(r), op));
        for (int r = 0; r < world; r++) {
            assertSameBytes(expected, bufs.get(r), "allReduce(" + dtype + "[" + n + "], " + op + ") on rank " + r
                    + " of " + world);
        }
    }

    @ParameterizedTest(name = "world {0}")
    @ValueSource(ints = {1, 2, 3, 4})
    void allReduceOfSmallBuffersIsExactForEveryOpAndDtype(int world) throws Exception {
        try (Ranks ranks = ranks(world)) {
            for (DType dtype : DType.values()) {
                for (ReduceOp op : Reference.opsFor(dtype)) {
                    for (long n : new long[] {1, 2, 3, 5, 1000, SMALL_BYTES / dtype.byteSize()}) {
                        checkAllReduce(ranks, dtype, op, n);
                    }
                }
            }
        }
    }

    @ParameterizedTest(name = "world {0}")
    @ValueSource(ints = {1, 2, 3, 4})
    void allReduceOfLargeBuffersIsExactForEveryOpAndDtype(int world) throws Exception {
        try (Ranks ranks = ranks(world)) {
            for (DType dtype : DType.values()) {
                for (ReduceOp op : Reference.opsFor(dtype)) {
                    for (long n : new long[] {SMALL_BYTES / dtype.byteSize() + 1,
                            awkward(200_000 / dtype.byteSize())}) {
                        checkAllReduce(ranks, dtype, op, n);
                    }
                }
            }
        }
    }

    @ParameterizedTest(name = "world {0}")
    @ValueSource(ints = {1, 2, 3, 4})
    void allReduceOfSeveralMegabytesIsExact(int world) throws Exception {
        try (Ranks ranks = ranks(world)) {
            checkAllReduce(ranks, DType.FLOAT32, ReduceOp.SUM, awkward(1_300_000));
            checkAllReduce(ranks, DType.INT64, ReduceOp.BXOR, awkward(650_000));
            checkAllReduce(ranks, DType.BFLOAT16, ReduceOp.AVG, awkward(1_600_000));
            checkAllReduce(ranks, DType.FLOAT64, ReduceOp.MAX, awkward(400_000));
        }
    }

    @ParameterizedTest(name = "world {0}")
    @ValueSource(ints = {1, 2, 3, 4})
    void allReduceOfZeroElementsCompletes(int world) throws Exception {
        try (Ranks ranks = ranks(world)) {
            for (DType dtype : DType.values()) {
                for (ReduceOp op : Reference.opsFor(dtype)) {
                    List<DeviceBuffer> bufs = new ArrayList<>();
                    for (int r = 0; r < world; r++) {
                        bufs.add(Buffers.alloc(dtype, 0, 3));
                    }
                    onAll(ranks, r -> ranks.get(r).allReduce(bufs.get(r), op));
                }
            }
            // The group is still usable afterwards.
            checkAllReduce(ranks, DType.FLOAT32, ReduceOp.SUM, 7);
        }
    }

    @ParameterizedTest(name = "world {0}")
    @ValueSource(ints = {1, 2, 3, 4})
    void allReduceOfInexactFloatsLeavesEveryRankBitIdentical(int world) throws Exception {
        try (Ranks ranks = ranks(world)) {
            for (DType dtype : new DType[] {DType.FLOAT32, DType.FLOAT64, DType.FLOAT16, DType.BFLOAT16}) {
                double u = switch (dtype) {
                    case FLOAT32 -> 0x1p-24;
                    case FLOAT64 -> 0x1p-53;
                    case FLOAT16 -> 0x1p-11;
                    default -> 0x1p-8;
                };
                for (ReduceOp op : new ReduceOp[] {ReduceOp.SUM, ReduceOp.AVG}) {
                    for (long n : new long[] {1001, awkward(100_000)}) {
                        List<DeviceBuffer> bufs = new ArrayList<>();
                        for (int r = 0; r < world; r++) {
                            SplittableRandom rnd = new SplittableRandom(31L * r + dtype.ordinal() + n);
                            DeviceBuffer b = Buffers.vector(dtype, n);
                            for (long i = 0; i < n; i++) {
                                put(b, i, rnd.nextDouble(-1, 1) * Math.scalb(1.0, rnd.nextInt(-8, 9)));
                            }
                            bufs.add(b);
                        }
                        double[] exact = new double[(int) n];
                        double[] magnitude = new double[(int) n];
                        for (int i = 0; i < n; i++) {
                            for (DeviceBuffer b : bufs) {
                                exact[i] += get(b, i);
                                magnitude[i] += Math.abs(get(b, i));
                            }
                            exact[i] = op == ReduceOp.AVG ? exact[i] / world : exact[i];
                        }
                        onAll(ranks, r -> ranks.get(r).allReduce(bufs.get(r), op));
                        String what = "allReduce(" + dtype + "[" + n + "], " + op + ") of world " + world;
                        for (int r = 1; r < world; r++) {
                            assertSameBytes(bufs.getFirst(), bufs.get(r), what + ": rank " + r + " against rank 0");
                        }
                        for (int i = 0; i < n; i++) {
                            double tolerance = 2 * (world + 1) * u * magnitude[i] + 1e-7;
                            double got = get(bufs.getFirst(), i);
                            if (!(Math.abs(got - exact[i]) <= tolerance)) {
                                fail(what + ": element " + i + " is " + got + ", expected " + exact[i] + " +- "
                                        + tolerance);
                            }
                        }
                    }
                }
            }
        }
    }

    @ParameterizedTest(name = "world {0}")
    @ValueSource(ints = {1, 2, 3, 4})
    void allReduceMaxAndMinPropagateNaNAndAgreeOnSignedZeros(int world) throws Exception {
        try (Ranks ranks = ranks(world)) {
            for (DType dtype : new DType[] {DType.FLOAT32, DType.FLOAT64, DType.FLOAT16, DType.BFLOAT16}) {
                for (ReduceOp op : new ReduceOp[] {ReduceOp.MAX, ReduceOp.MIN}) {
                    for (long n : new long[] {1000, awkward(70_000)}) {
                        List<DeviceBuffer> bufs = new ArrayList<>();
                        for (int r = 0; r < world; r++) {
                            DeviceBuffer b = Reference.input(dtype, op, r, world, n);
                            for (long i = 5; i < n; i += 17) {
                                if ((i / 17) % world == r) {
                                    put(b, i, Double.NaN);
                                }
                            }
                            // Signed zeros: +0.0 on some ranks, -0.0 on others (partners must still agree).
                            for (long i = 9; i < n; i += 23) {
                                put(b, i, (i / 23 + r) % 2 == 0 ? 0.0 : -0.0);
                            }
                            bufs.add(b);
                        }
                        DeviceBuffer expected = Reference.reduce(op, bufs);
                        onAll(ranks, r -> ranks.get(r).allReduce(bufs.get(r), op));
                        for (int r = 0; r < world; r++) {
                            assertSameValues(expected, bufs.get(r), "allReduce(" + dtype + "[" + n + "], " + op
                                    + ") with NaNs and signed zeros on rank " + r + " of " + world);
                            assertSameBytes(bufs.getFirst(), bufs.get(r), "allReduce(" + dtype + "[" + n + "], " + op
                                    + ") with NaNs and signed zeros: rank " + r + " against rank 0");
                        }
                    }
                }
            }
        }
    }

    @Test
    void allReduceSumsAcrossThreeRanks() throws Exception {
        for (long n : new long[] {1, 1000, 300_000}) {
            try (Ranks ranks = ranks(3)) {
                List<DeviceBuffer> bufs = new ArrayList<>();
                for (int r = 0; r < 3; r++) {
                    int rr = r;
                    bufs.add(floats(n, i -> (float) (rr + i % 7)));
                }
                onAll(ranks, r -> ranks.get(r).allReduce(bufs.get(r), ReduceOp.SUM));
                for (int r = 0; r < 3; r++) {
                    for (long i = 0; i < n; i++) {
                        if (3 + 3 * (i % 7) != at(bufs.get(r), i)) {
                            fail("rank " + r + " element " + i + " of " + n + " is " + at(bufs.get(r), i));
                        }
                    }
                }
            }
        }
    }

    @Test
    void allReduceOf64MiBBetweenTwoRanksIsExact() throws Exception {
        long n = 16L << 20;
        try (Ranks ranks = ranks(2)) {
            List<DeviceBuffer> bufs = new ArrayList<>();
            for (int r = 0; r < 2; r++) {
                DeviceBuffer b = Buffers.vector(DType.FLOAT32, n);
                MemorySegment s = b.segment();
                for (long i = 0; i < n; i++) {
                    s.setAtIndex(ValueLayout.JAVA_FLOAT_UNALIGNED, i, (i & 4095) + r * 0.5f);
                }
                bufs.add(b);
            }
            onAll(ranks, r -> ranks.get(r).allReduce(bufs.get(r), ReduceOp.SUM));
            MemorySegment s = bufs.getFirst().segment();
            for (long i = 0; i < n; i++) {
                float v = s.getAtIndex(ValueLayout.JAVA_FLOAT_UNALIGNED, i);
                if (v != 2 * (i & 4095) + 0.5f) {
                    fail("element " + i + " is " + v + ", expected " + (2 * (i & 4095) + 0.5f));
                }
            }
            assertSameBytes(bufs.get(0), bufs.get(1), "64 MiB allReduce: rank 1 against rank 0");
        }
    }

    // ---- broadcast and reduce -------------------------------------------------------------------------------

    @ParameterizedTest(name = "world {0}")
    @ValueSource(ints = {1, 2, 3, 4})
    void broadcastCopiesTheRootsBufferToEveryRankFromEveryRoot(int world) throws Exception {
        long[] sizes = {0, 5, 1000, SMALL_BYTES + 1, awkward(300_000)};
        try (Ranks ranks = ranks(world)) {
            for (int root = 0; root < world; root++) {
                for (int k = 0; k < sizes.length; k++) {
                    DType dtype = DType.values()[(root + k) % DType.values().length];
                    long n = sizes[k];
                    List<DeviceBuffer> bufs = new ArrayList<>();
                    for (int r = 0; r < world; r++) {
                        bufs.add(filled(dtype, n, r, k));
                    }
                    DeviceBuffer expected = Buffers.copy(bufs.get(root));
                    int rt = root;
                    onAll(ranks, r -> ranks.get(r).broadcast(bufs.get(r), rt));
                    for (int r = 0; r < world; r++) {
                        assertSameBytes(expected, bufs.get(r), "broadcast(" + dtype + "[" + n + "], root=" + root
                                + ") on rank " + r + " of " + world);
                    }
                }
            }
        }
    }

    @Test
    void broadcastCopiesTheRootsBufferToEveryRank() throws Exception {
        for (long n : new long[] {5, 1_000_000}) {
            try (Ranks ranks = ranks(4)) {
                List<DeviceBuffer> bufs = new ArrayList<>();
                for (int r = 0; r < 4; r++) {
                    int rr = r;
                    bufs.add(floats(n, i -> rr == 2 ? i : -1f));
                }
                onAll(ranks, r -> ranks.get(r).broadcast(bufs.get(r), 2));
                for (int r = 0; r < 4; r++) {
                    assertEquals(n - 1, at(bufs.get(r), n - 1), "rank " + r);
                    assertEquals(0, at(bufs.get(r), 0), "rank " + r);
                }
            }
        }
    }

    @Test
    void broadcastOf64MiBBetweenTwoRanksIsExact() throws Exception {
        long n = 8L << 20;
        try (Ranks ranks = ranks(2)) {
            DeviceBuffer root = Buffers.vector(DType.INT64, n);
            MemorySegment s = root.segment();
            for (long i = 0; i < n; i++) {
                s.setAtIndex(ValueLayout.JAVA_LONG_UNALIGNED, i, Reference.mix(1, i));
            }
            DeviceBuffer expected = Buffers.copy(root);
            DeviceBuffer other = Buffers.vector(DType.INT64, n);
            List<DeviceBuffer> bufs = List.of(other, root);
            onAll(ranks, r -> ranks.get(r).broadcast(bufs.get(r), 1));
            assertSameBytes(expected, other, "64 MiB broadcast from rank 1 on rank 0");
            assertSameBytes(expected, root, "64 MiB broadcast: the root's own buffer");
        }
    }

    @ParameterizedTest(name = "world {0}")
    @ValueSource(ints = {1, 2, 3, 4})
    void reduceLeavesTheResultOnTheRootFromEveryRoot(int world) throws Exception {
        record Case(DType dtype, ReduceOp op) {
        }
        List<Case> cases = List.of(new Case(DType.FLOAT32, ReduceOp.SUM), new Case(DType.INT32, ReduceOp.MAX),
                new Case(DType.FLOAT64, ReduceOp.AVG), new Case(DType.INT64, ReduceOp.BXOR),
                new Case(DType.BFLOAT16, ReduceOp.PRODUCT), new Case(DType.BOOL, ReduceOp.MIN),
                new Case(DType.FLOAT16, ReduceOp.SUM));
        try (Ranks ranks = ranks(world)) {
            for (int root = 0; root < world; root++) {
                for (Case c : cases) {
                    for (long n : new long[] {0, 3, 1000, awkward(70_000)}) {
                        checkReduce(ranks, c.dtype(), c.op(), root, n);
                    }
                }
                checkReduce(ranks, DType.FLOAT32, ReduceOp.SUM, root, awkward(300_000));
            }
        }
    }

    private void checkReduce(Ranks ranks, DType dtype, ReduceOp op, int root, long n) throws Exception {
        int world = ranks.size();
        List<DeviceBuffer> bufs = new ArrayList<>();
        for (int r = 0; r < world; r++) {
            bufs.add(Reference.input(dtype, op, r, world, n));
        }
        DeviceBuffer expected = Reference.reduce(op, bufs);
        onAll(ranks, r -> ranks.get(r).reduce(bufs.get(r), root, op));
        assertSameBytes(expected, bufs.get(root), "reduce(" + dtype + "[" + n + "], root=" + root + ", " + op
                + ") on the root of " + world);
    }

    // ---- gathering and scattering ---------------------------------------------------------------------------

    @ParameterizedTest(name = "world {0}")
    @ValueSource(ints = {1, 2, 3, 4})
    void allGatherGivesEveryRankEveryRanksInput(int world) throws Exception {
        long[] sizes = {0, 1, 1000, SMALL_BYTES + 3, awkward(300_000)};
        try (Ranks ranks = ranks(world)) {
            for (int k = 0; k < sizes.length; k++) {
                DType dtype = DType.values()[k % DType.values().length];
                long n = sizes[k];
                List<DeviceBuffer> inputs = new ArrayList<>();
                List<List<DeviceBuffer>> outputs = new ArrayList<>();
                for (int r = 0; r < world; r++) {
                    inputs.add(filled(dtype, n, r, k));
                    List<DeviceBuffer> out = new ArrayList<>();
                    for (int p = 0; p < world; p++) {
                        out.add(Buffers.vector(dtype, n));
                    }
                    outputs.add(out);
                }
                List<DeviceBuffer> originals = inputs.stream().map(Buffers::copy).toList();
                onAll(ranks, r -> ranks.get(r).allGather(outputs.get(r), inputs.get(r)));
                for (int r = 0; r < world; r++) {
                    for (int p = 0; p < world; p++) {
                        assertSameBytes(originals.get(p), outputs.get(r).get(p), "allGather(" + dtype + "[" + n
                                + "]): rank " + r + "'s copy of rank " + p + "'s input, world " + world);
                    }
                    assertSameBytes(originals.get(r), inputs.get(r), "allGather left rank " + r + "'s input alone");
                }
            }
        }
    }

    @ParameterizedTest(name = "world {0}")
    @ValueSource(ints = {1, 2, 3, 4})
    void gatherCollectsEveryRanksInputOnEveryRoot(int world) throws Exception {
        long[] sizes = {0, 3, 1000, awkward(100_000)};
        try (Ranks ranks = ranks(world)) {
            for (int root = 0; root < world; root++) {
                for (int k = 0; k < sizes.length; k++) {
                    DType dtype = DType.values()[(root + 2 * k) % DType.values().length];
                    long n = sizes[k];
                    List<DeviceBuffer> inputs = new ArrayList<>();
                    for (int r = 0; r < world; r++) {
                        inputs.add(filled(dtype, n, r, k + root));
                    }
                    List<DeviceBuffer> outputs = new ArrayList<>();
                    for (int p = 0; p < world; p++) {
                        outputs.add(Buffers.vector(dtype, n));
                    }
                    int rt = root;
                    onAll(ranks, r -> ranks.get(r).gather(r == rt ? outputs : List.of(), inputs.get(r), rt));
                    for (int p = 0; p < world; p++) {
                        assertSameBytes(inputs.get(p), outputs.get(p), "gather(" + dtype + "[" + n + "], root="
                                + root + "): rank " + p + "'s input on the root, world " + world);
                    }
                }
            }
        }
    }

    @ParameterizedTest(name = "world {0}")
    @ValueSource(ints = {1, 2, 3, 4})
    void scatterHandsEveryRankItsPartFromEveryRoot(int world) throws Exception {
        long[] sizes = {0, 3, 1000, awkward(100_000)};
        try (Ranks ranks = ranks(world)) {
            for (int root = 0; root < world; root++) {
                for (int k = 0; k < sizes.length; k++) {
                    DType dtype = DType.values()[(root + 3 * k) % DType.values().length];
                    long n = sizes[k];
                    List<DeviceBuffer> parts = new ArrayList<>();
                    List<DeviceBuffer> outputs = new ArrayList<>();
                    for (int p = 0; p < world; p++) {
                        parts.add(filled(dtype, n, p, 7 * k + root));
                        outputs.add(Buffers.vector(dtype, n));
                    }
                    int rt = root;
                    onAll(ranks, r -> ranks.get(r).scatter(outputs.get(r), r == rt ? parts : List.of(), rt));
                    for (int p = 0; p < world; p++) {
                        assertSameBytes(parts.get(p), outputs.get(p), "scatter(" + dtype + "[" + n + "], root="
                                + root + "): rank " + p + "'s part, world " + world);
                    }
                }
            }
        }
    }

    @ParameterizedTest(name = "world {0}")
    @ValueSource(ints = {1, 2, 3, 4})
    void reduceScatterGivesEachRankItsReducedBlock(int world) throws Exception {
        record Case(DType dtype, ReduceOp op) {
        }
        List<Case> cases = List.of(new Case(DType.FLOAT32, ReduceOp.SUM), new Case(DType.FLOAT64, ReduceOp.AVG),
                new Case(DType.INT64, ReduceOp.BXOR), new Case(DType.BFLOAT16, ReduceOp.MAX),
                new Case(DType.BOOL, ReduceOp.BOR), new Case(DType.INT32, ReduceOp.PRODUCT));
        try (Ranks ranks = ranks(world)) {
            for (Case c : cases) {
                for (long n : new long[] {0, 1, 3, 1000, awkward(100_000)}) {
                    List<List<DeviceBuffer>> inputs = new ArrayList<>();
                    List<DeviceBuffer> outputs = new ArrayList<>();
                    for (int r = 0; r < world; r++) {
                        List<DeviceBuffer> blocks = new ArrayList<>();
                        for (int b = 0; b < world; b++) {
                            DeviceBuffer x = Buffers.vector(c.dtype(), n);
                            Reference.fill(x, c.op(), r, world, 1_000_003L * b);
                            blocks.add(x);
                        }
                        inputs.add(blocks);
                        outputs.add(Buffers.vector(c.dtype(), n));
                    }
                    List<DeviceBuffer> expected = new ArrayList<>();
                    for (int b = 0; b < world; b++) {
                        int block = b;
                        expected.add(Reference.reduce(c.op(), inputs.stream().map(l -> l.get(block)).toList()));
                    }
                    onAll(ranks, r -> ranks.get(r).reduceScatter(outputs.get(r), inputs.get(r), c.op()));
                    for (int r = 0; r < world; r++) {
                        assertSameBytes(expected.get(r), outputs.get(r), "reduceScatter(" + c.dtype() + "[" + n
                                + "] x " + world + ", " + c.op() + ") on rank " + r + " of " + world);
                    }
                }
            }
        }
    }

    /** Elements rank {@code src} sends rank {@code dst} in round {@code round} of the all-to-all test. */
    private static long allToAllSize(int src, int dst, int world, int round) {
        if (world > 1 && src == (round % world) && dst == (src + 1) % world) {
            return 100_003; // one large block per round, on a different pair each round
        }
        return ((src * 3L + dst * 5L + round) % 4) * 333;
    }

    @ParameterizedTest(name = "world {0}")
    @ValueSource(ints = {1, 2, 3, 4})
    void allToAllDeliversUnevenAndEmptyBlocks(int world) throws Exception {
        try (Ranks ranks = ranks(world)) {
            for (int round = 0; round < 3; round++) {
                List<List<DeviceBuffer>> inputs = new ArrayList<>();
                List<List<DeviceBuffer>> outputs = new ArrayList<>();
                for (int r = 0; r < world; r++) {
                    List<DeviceBuffer> in = new ArrayList<>();
                    List<DeviceBuffer> out = new ArrayList<>();
                    for (int p = 0; p < world; p++) {
                        DeviceBuffer b = Buffers.vector(DType.INT64, allToAllSize(r, p, world, round));
                        for (long i = 0; i < b.numel(); i++) {
                            putLong(b, i, r * 1_000_000_000L + p * 1_000_000L + i + round);
                        }
                        in.add(b);
                        out.add(Buffers.vector(DType.INT64, allToAllSize(p, r, world, round)));
                    }
                    inputs.add(in);
                    outputs.add(out);
                }
                onAll(ranks, r -> ranks.get(r).allToAll(outputs.get(r), inputs.get(r)));
                for (int dst = 0; dst < world; dst++) {
                    for (int src = 0; src < world; src++) {
                        assertSameBytes(inputs.get(src).get(dst), outputs.get(dst).get(src), "allToAll round " + round
                                + ": the block rank " + src + " sent rank " + dst + ", world " + world);
                    }
                }
            }
            // Every block empty.
            List<List<DeviceBuffer>> empty = new ArrayList<>();
            for (int r = 0; r < world; r++) {
                List<DeviceBuffer> l = new ArrayList<>();
                for (int p = 0; p < world; p++) {
                    l.add(Buffers.vector(DType.FLOAT32, 0));
                }
                empty.add(l);
            }
            onAll(ranks, r -> ranks.get(r).allToAll(empty.get(r), empty.get(r)));
        }
    }

    // ---- barrier ----------------------------------------------------------------------------------------------

    @ParameterizedTest(name = "world {0}")
    @ValueSource(ints = {1, 2, 3, 4})
    void barrierHoldsEveryRankUntilTheLastOneArrives(int world) throws Exception {
        try (Ranks ranks = ranks(world)) {
            Set<Integer> lates = new HashSet<>(List.of(world - 1, 0));
            for (int late : lates) {
                AtomicLongArray passed = new AtomicLongArray(world);
                List<Future<Void>> fs = new ArrayList<>();
                for (int r = 0; r < world; r++) {
                    if (r != late) {
                        int rr = r;
                        fs.add(ranks.get(r).barrier().map(v -> stamp(passed, rr)));
                    }
                }
                Thread.sleep(150);
                for (int r = 0, k = 0; r < world; r++) {
                    if (r != late) {
                        assertFalse(fs.get(k++).isComplete(), "rank " + r + " left the barrier before rank " + late
                                + " reached it (world " + world + ")");
                    }
                }
                long arrival = System.nanoTime();
                int lt = late;
                // Mapped, not onSuccess: awaitAll then also waits for the time to be taken.
                fs.add(ranks.get(late).barrier().map(v -> stamp(passed, lt)));
                awaitAll(fs);
                for (int r = 0; r < world; r++) {
                    assertTrue(passed.get(r) >= arrival, "rank " + r + " left the barrier before rank " + late
                            + " reached it (world " + world + ")");
                }
            }
            // Back-to-back barriers stay matched.
            for (int i = 0; i < 5; i++) {
                onAll(ranks, r -> ranks.get(r).barrier());
            }
        }
    }

    /** Records when rank {@code r} left the barrier. */
    private static Void stamp(AtomicLongArray passed, int r) {
        passed.set(r, System.nanoTime());
        return null;
    }

    // ---- point-to-point ------------------------------------------------------------------------------------

    @Test
    void sendAndRecvMatchByTag() throws Exception {
        assumeFullPointToPoint();
        try (Ranks ranks = ranks(2)) {
            DeviceBuffer a = floats(10, i -> 1f);
            DeviceBuffer b = floats(10, i -> 2f);
            DeviceBuffer x = floats(10, i -> 0f);
            DeviceBuffer y = floats(10, i -> 0f);
            Future<Integer> ry = ranks.get(1).recv(y, 0, 7);
            Future<Integer> rx = ranks.get(1).recv(x, Backend.ANY_SOURCE, 3);
            ranks.get(0).send(a, 1, 3).await(10, TimeUnit.SECONDS);
            ranks.get(0).send(b, 1, 7).await(10, TimeUnit.SECONDS);
            assertEquals(0, rx.await(10, TimeUnit.SECONDS));
            assertEquals(0, ry.await(10, TimeUnit.SECONDS));
            assertEquals(1f, at(x, 9));
            assertEquals(2f, at(y, 9));

            // Messages that arrived before their receives are still told apart by tag.
            ranks.get(0).send(a, 1, 11).await(10, TimeUnit.SECONDS);
            ranks.get(0).send(b, 1, 12).await(10, TimeUnit.SECONDS);
            DeviceBuffer u = floats(10, i -> 0f);
            DeviceBuffer w = floats(10, i -> 0f);
            assertEquals(0, ranks.get(1).recv(w, 0, 12).await(10, TimeUnit.SECONDS));
            assertEquals(0, ranks.get(1).recv(u, 0, 11).await(10, TimeUnit.SECONDS));
            assertEquals(1f, at(u, 0));
            assertEquals(2f, at(w, 0));
        }
    }

    private static DeviceBuffer numbered(long n, int k) {
        DeviceBuffer b = Buffers.vector(DType.INT32, n);
        for (long i = 0; i < n; i++) {
            putLong(b, i, k * 1_000_000L + i);
        }
        return b;
    }

    @Test
    void messagesWithTheSameTagArriveInTheOrderTheyWereSent() throws Exception {
        try (Ranks ranks = ranks(2)) {
            int count = 10;
            long[] sizes = new long[count];
            for (int k = 0; k < count; k++) {
                sizes[k] = k % 2 == 0 ? 4 : 50_000 + k;
            }
            for (String order : List.of("sends first", "receives first", "receives after the sends completed")) {
                List<Future<Void>> sends = new ArrayList<>();
                List<Future<Integer>> recvs = new ArrayList<>();
                List<DeviceBuffer> got = new ArrayList<>();
                for (int k = 0; k < count; k++) {
                    got.add(Buffers.vector(DType.INT32, sizes[k]));
                }
                if (order.equals("receives first")) {
                    for (int k = 0; k < count; k++) {
                        recvs.add(ranks.get(1).recv(got.get(k), 0, 5));
                    }
                    allReach(ranks);
                }
                for (int k = 0; k < count; k++) {
                    sends.add(ranks.get(0).send(numbered(sizes[k], k), 1, 5));
                }
                if (order.equals("receives after the sends completed")) {
                    awaitAll(sends);
                    allReach(ranks);
                }
                if (!order.equals("receives first")) {
                    for (int k = 0; k < count; k++) {
                        recvs.add(ranks.get(1).recv(got.get(k), 0, 5));
                    }
                }
                awaitAll(sends);
                awaitAll(recvs);
                for (int k = 0; k < count; k++) {
                    assertSameBytes(numbered(sizes[k], k), got.get(k), "message " + k + " (" + order + ")");
                }
            }
        }
    }

    @Test
    void manyLargeMessagesSentBeforeTheirReceivesArriveIntactAndInOrder() throws Exception {
        assumeFullPointToPoint();
        try (Ranks ranks = ranks(2)) {
            int count = 12;
            long n = 75_000; // 300 KB each
            List<Future<Void>> sends = new ArrayList<>();
            for (int k = 0; k < count; k++) {
                sends.add(ranks.get(0).send(numbered(n + k, k), 1, 9));
            }
            allReach(ranks);
            for (int k = 0; k < count; k++) {
                DeviceBuffer got = Buffers.vector(DType.INT32, n + k);
                assertEquals(0, ranks.get(1).recv(got, 0, 9).await(AWAIT_SECONDS, TimeUnit.SECONDS));
                assertSameBytes(numbered(n + k, k), got, "message " + k);
                Thread.sleep(k % 3 == 0 ? 30 : 0);
            }
            awaitAll(sends);
        }
    }

    @Test
    void anySourceReceivesFromWhicheverRankSendsAndReturnsIt() throws Exception {
        assumeFullPointToPoint();
        try (Ranks ranks = ranks(3)) {
            for (boolean sendsFirst : new boolean[] {false, true}) {
                List<DeviceBuffer> got = List.of(Buffers.vector(DType.INT64, 8), Buffers.vector(DType.INT64, 8));
                List<Future<Integer>> recvs = new ArrayList<>();
                if (!sendsFirst) {
                    got.forEach(b -> recvs.add(ranks.get(0).recv(b, Backend.ANY_SOURCE, 4)));
                }
                List<Future<Void>> sends = new ArrayList<>();
                for (int src = 1; src < 3; src++) {
                    DeviceBuffer b = Buffers.vector(DType.INT64, 8);
                    for (int i = 0; i < 8; i++) {
                        putLong(b, i, src);
                    }
                    sends.add(ranks.get(src).send(b, 0, 4));
                }
                awaitAll(sends);
                if (sendsFirst) {
                    got.forEach(b -> recvs.add(ranks.get(0).recv(b, Backend.ANY_SOURCE, 4)));
                }
                List<Integer> senders = awaitAll(recvs);
                assertEquals(Set.of(1, 2), new HashSet<>(senders), "the senders ANY_SOURCE returned");
                for (int k = 0; k < 2; k++) {
                    for (int i = 0; i < 8; i++) {
                        assertEquals(senders.get(k), (int) getLong(got.get(k), i),
                                "the message received from rank " + senders.get(k) + " holds its data");
                    }
                }
            }
        }
    }

    @Test
    void sendBeforeRecvAndRecvBeforeSendBothDeliver() throws Exception {
        assumeFullPointToPoint();
        try (Ranks ranks = ranks(2)) {
            for (long n : new long[] {16, 300_000}) {
                // irecv first
                DeviceBuffer got = Buffers.vector(DType.INT32, n);
                Future<Integer> recv = ranks.get(0).recv(got, 1, 1);
                allReach(ranks);
                Future<Void> send = ranks.get(1).send(numbered(n, 1), 0, 1);
                assertEquals(1, recv.await(AWAIT_SECONDS, TimeUnit.SECONDS));
                send.await(AWAIT_SECONDS, TimeUnit.SECONDS);
                assertSameBytes(numbered(n, 1), got, "irecv before isend, " + n + " elements");
                // isend first
                DeviceBuffer got2 = Buffers.vector(DType.INT32, n);
                Future<Void> send2 = ranks.get(1).send(numbered(n, 2), 0, 1);
                allReach(ranks);
                assertEquals(1, ranks.get(0).recv(got2, 1, 1).await(AWAIT_SECONDS, TimeUnit.SECONDS));
                send2.await(AWAIT_SECONDS, TimeUnit.SECONDS);
                assertSameBytes(numbered(n, 2), got2, "isend before irecv, " + n + " elements");
            }
        }
    }

    @Test
    void zeroByteMessagesAreDelivered() throws Exception {
        assumeFullPointToPoint();
        try (Ranks ranks = ranks(2)) {
            DeviceBuffer empty = Buffers.vector(DType.FLOAT32, 0);
            Future<Integer> posted = ranks.get(1).recv(Buffers.vector(DType.FLOAT32, 0), 0, 2);
            ranks.get(0).send(empty, 1, 2).await(10, TimeUnit.SECONDS);
            assertEquals(0, posted.await(10, TimeUnit.SECONDS));
            ranks.get(0).send(empty, 1, 3).await(10, TimeUnit.SECONDS);
            assertEquals(0, ranks.get(1).recv(Buffers.vector(DType.FLOAT32, 0), Backend.ANY_SOURCE, 3)
                    .await(10, TimeUnit.SECONDS));
            // An empty message does not disturb the next one on the same tag.
            ranks.get(0).send(empty, 1, 4).await(10, TimeUnit.SECONDS);
            ranks.get(0).send(numbered(5, 3), 1, 4).await(10, TimeUnit.SECONDS);
            assertEquals(0, ranks.get(1).recv(Buffers.vector(DType.FLOAT32, 0), 0, 4).await(10, TimeUnit.SECONDS));
            DeviceBuffer five = Buffers.vector(DType.INT32, 5);
            assertEquals(0, ranks.get(1).recv(five, 0, 4).await(10, TimeUnit.SECONDS));
            assertSameBytes(numbered(5, 3), five, "the message after an empty one");
        }
    }

    @Test
    void aSixteenMiBMessageArrivesIntact() throws Exception {
        long n = 4L << 20;
        DeviceBuffer message = numbered(n, 7);
        try (Ranks ranks = ranks(2)) {
            for (String order : List.of("receive posted first", "send first", "receive posted late")) {
                DeviceBuffer got = Buffers.vector(DType.INT32, n);
                Future<Integer> recv = order.equals("receive posted first") ? ranks.get(1).recv(got, 0, 16) : null;
                if (recv != null) {
                    allReach(ranks);
                }
                Future<Void> send = ranks.get(0).send(message, 1, 16);
                if (order.equals("receive posted late")) {
                    allReach(ranks);
                }
                if (recv == null) {
                    recv = ranks.get(1).recv(got, 0, 16);
                }
                assertEquals(0, recv.await(AWAIT_SECONDS, TimeUnit.SECONDS));
                send.await(AWAIT_SECONDS, TimeUnit.SECONDS);
                assertSameBytes(message, got, "16 MiB message, " + order);
            }
        }
    }

    @Test
    void recvIntoABufferOfTheWrongSizeFailsNamingBothSizes() throws Exception {
        assumeFullPointToPoint();
        try (Ranks ranks = ranks(2)) {
            for (boolean sendFirst : new boolean[] {false, true}) {
                for (long n : new long[] {10, 100_000}) {
                    Future<Integer> recv = null;
                    DeviceBuffer tooBig = Buffers.vector(DType.FLOAT32, 2 * n);
                    if (!sendFirst) {
                        recv = ranks.get(1).recv(tooBig, 0, 6);
                    }
                    ranks.get(0).send(Buffers.vector(DType.FLOAT32, n), 1, 6).await(10, TimeUnit.SECONDS);
                    if (sendFirst) {
                        recv = ranks.get(1).recv(tooBig, 0, 6);
                    }
                    Throwable t = failureOf(recv, FAIL_FAST_SECONDS, "a recv of " + 8 * n + " bytes given " + 4 * n);
                    assertMentions(t.getMessage(), String.valueOf(4 * n), String.valueOf(8 * n));
                }
            }
        }
    }

    @Test
    void recvIntoABufferOfTheWrongDtypeFailsNamingBothDtypes() throws Exception {
        assumeFullPointToPoint();
        try (Ranks ranks = ranks(2)) {
            for (boolean sendFirst : new boolean[] {false, true}) {
                Future<Integer> recv = null;
                DeviceBuffer ints = Buffers.vector(DType.INT32, 10);
                if (!sendFirst) {
                    recv = ranks.get(1).recv(ints, 0, 6);
                }
                ranks.get(0).send(Buffers.vector(DType.FLOAT32, 10), 1, 6).await(10, TimeUnit.SECONDS);
                if (sendFirst) {
                    recv = ranks.get(1).recv(ints, 0, 6);
                }
                Throwable t = failureOf(recv, FAIL_FAST_SECONDS, "a recv of int32 given float32");
                assertMentions(t.getMessage(), "float32", "int32");
            }
        }
    }

    @Test
    void recvWithoutASenderTimesOutNamingThePeer() throws Exception {
        try (Ranks ranks = ranks(2, Duration.ofSeconds(1))) {
            Throwable t = failureOf(ranks.get(0).recv(Buffers.vector(DType.FLOAT32, 4), 1, 8), 10,
                    "a recv nobody sends to");
            CommunicationTimeoutException e = assertInstanceOf(CommunicationTimeoutException.class, t);
            assertMentions(e.getMessage(), "rank 1", "recv");
        }
    }

    // ---- two groups at once --------------------------------------------------------------------------------

    @Test
    void collectivesOnTwoGroupsInterleaveFromTheSameThreads() throws Exception {
        int world = 3;
        int rounds = 8;
        try (Ranks a = ranks(world); Ranks b = ranks(world)) {
            DeviceBuffer[][] sums = new DeviceBuffer[world][rounds];
            DeviceBuffer[][] casts = new DeviceBuffer[world][rounds];
            DeviceBuffer[][] received = new DeviceBuffer[world][rounds];
            for (int r = 0; r < world; r++) {
                for (int k = 0; k < rounds; k++) {
                    long n = k % 2 == 0 ? 100 : 70_001;
                    sums[r][k] = Reference.input(DType.FLOAT32, ReduceOp.SUM, r, world, n);
                    casts[r][k] = filled(DType.INT64, n, r, k);
                    received[r][k] = Buffers.vector(DType.INT32, n);
                }
            }
            List<DeviceBuffer> expectedSums = new ArrayList<>();
            List<DeviceBuffer> expectedCasts = new ArrayList<>();
            for (int k = 0; k < rounds; k++) {
                int kk = k;
                expectedSums.add(Reference.reduce(ReduceOp.SUM, Arrays.stream(sums).map(x -> x[kk]).toList()));
                expectedCasts.add(Buffers.copy(casts[k % world][k]));
            }
            ExecutorService threads = Executors.newFixedThreadPool(world);
            try {
                // qualified: clashes with Future
                List<java.util.concurrent.Future<List<Future<?>>>> work = new ArrayList<>();
                for (int r = 0; r < world; r++) {
                    int rank = r;
                    work.add(threads.submit(() -> {
                        List<Future<?>> fs = new ArrayList<>();
                        for (int k = 0; k < rounds; k++) {
                            Future<Void> sum;
                            Future<Void> cast;
                            if ((rank + k) % 2 == 0) {
                                sum = a.get(rank).allReduce(sums[rank][k], ReduceOp.SUM);
                                cast = b.get(rank).broadcast(casts[rank][k], k % world);
                            } else {
                                cast = b.get(rank).broadcast(casts[rank][k], k % world);
                                sum = a.get(rank).allReduce(sums[rank][k], ReduceOp.SUM);
                            }
                            fs.add(sum);
                            fs.add(cast);
                            // Point-to-point on one group or the other, with the same tags on both.
                            Ranks p2p = k % 2 == 0 ? a : b;
                            fs.add(p2p.get(rank).send(numbered(received[rank][k].numel(), k), (rank + 1) % world, 1));
                            fs.add(p2p.get(rank).recv(received[rank][k], (rank + world - 1) % world, 1));
                            if (k % 3 == 2) {
                                sum.await(AWAIT_SECONDS, TimeUnit.SECONDS);
                                cast.await(AWAIT_SECONDS, TimeUnit.SECONDS);
                            }
                        }
                        return fs;
                    }));
                }
                for (var w : work) {
                    for (Future<?> f : w.get(AWAIT_SECONDS, TimeUnit.SECONDS)) {
                        f.await(AWAIT_SECONDS, TimeUnit.SECONDS);
                    }
                }
            } finally {
                threads.shutdownNow();
            }
            for (int r = 0; r < world; r++) {
                for (int k = 0; k < rounds; k++) {
                    assertSameBytes(expectedSums.get(k), sums[r][k], "group A allReduce " + k + " on rank " + r);
                    assertSameBytes(expectedCasts.get(k), casts[r][k], "group B broadcast " + k + " on rank " + r);
                    assertSameBytes(numbered(received[r][k].numel(), k), received[r][k], "message " + k + " on rank "
                            + r);
                }
            }
        }
    }

    // ---- faults ------------------------------------------------------------------------------------------------

    /** Every kind of operation on {@code b} fails within {@link #FAIL_FAST_SECONDS}; returns the failures. */
    protected static List<Throwable> assertFailsFast(Backend b, String why) {
        int other = b.size() > 1 ? (b.rank() + 1) % b.size() : 0;
        List<Throwable> out = new ArrayList<>();
        String on = " on rank " + b.rank() + " after " + why;
        out.add(failureOf(b.allReduce(Buffers.vector(DType.FLOAT32, 4), ReduceOp.SUM), FAIL_FAST_SECONDS,
                "allReduce" + on));
        out.add(failureOf(b.broadcast(Buffers.vector(DType.FLOAT32, 100_000), 0), FAIL_FAST_SECONDS,
                "broadcast" + on));
        out.add(failureOf(b.barrier(), FAIL_FAST_SECONDS, "barrier" + on));
        if (b.size() > 1) {
            out.add(failureOf(b.send(Buffers.vector(DType.FLOAT32, 4), other, 77), FAIL_FAST_SECONDS, "send" + on));
            out.add(failureOf(b.recv(Buffers.vector(DType.FLOAT32, 4), other, 77), FAIL_FAST_SECONDS, "recv" + on));
        }
        for (Throwable t : out) {
            assertInstanceOf(CommunicationException.class, t, "the failure of an operation" + on);
        }
        return out;
    }

    @Test
    void mismatchedCollectivesFailOnBothRanksNamingBothCallsAndRanks() throws Exception {
        try (Ranks ranks = ranks(2)) {
            Future<Void> reduce = ranks.get(0).allReduce(Buffers.vector(DType.FLOAT32, 10), ReduceOp.SUM);
            Future<Void> cast = ranks.get(1).broadcast(Buffers.vector(DType.FLOAT32, 10), 0);
            for (Future<Void> f : List.of(reduce, cast)) {
                Throwable t = failureOf(f, FAIL_FAST_SECONDS, "a mismatched collective");
                assertInstanceOf(CollectiveMismatchException.class, t);
                assertMentions(t.getMessage(), "allReduce", "broadcast", "rank 0", "rank 1");
            }
            assertFailsFast(ranks.get(0), "a mismatch");
            assertFailsFast(ranks.get(1), "a mismatch");
        }
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"count", "dtype", "shape", "reduceOp", "root"})
    void theSameCollectiveWithDifferentArgumentsIsAMismatch(String what) throws Exception {
        try (Ranks ranks = ranks(2)) {
            Future<Void> f0;
            Future<Void> f1;
            String[] mentions;
            switch (what) {
                case "count" -> {
                    f0 = ranks.get(0).allReduce(Buffers.vector(DType.FLOAT32, 10), ReduceOp.SUM);
                    f1 = ranks.get(1).allReduce(Buffers.vector(DType.FLOAT32, 20), ReduceOp.SUM);
                    mentions = new String[] {"10", "20"};
                }
                case "dtype" -> {
                    f0 = ranks.get(0).allReduce(Buffers.vector(DType.FLOAT32, 10), ReduceOp.SUM);
                    f1 = ranks.get(1).allReduce(Buffers.vector(DType.INT32, 10), ReduceOp.SUM);
                    mentions = new String[] {"float32", "int32"};
                }
                case "shape" -> {
                    f0 = ranks.get(0).allReduce(Buffers.alloc(DType.FLOAT32, 2, 5), ReduceOp.SUM);
                    f1 = ranks.get(1).allReduce(Buffers.alloc(DType.FLOAT32, 10), ReduceOp.SUM);
                    mentions = new String[] {"shape"};
                }
                case "reduceOp" -> {
                    f0 = ranks.get(0).allReduce(Buffers.vector(DType.FLOAT32, 10), ReduceOp.SUM);
                    f1 = ranks.get(1).allReduce(Buffers.vector(DType.FLOAT32, 10), ReduceOp.MAX);
                    mentions = new String[] {"SUM", "MAX"};
                }
                default -> {
                    // Each rank thinks it is the root: both only send, so each may finish before the other's
                    // frame shows the disagreement. The group must break then, so the next collective fails.
                    f0 = ranks.get(0).broadcast(Buffers.vector(DType.FLOAT32, 10), 0);
                    f1 = ranks.get(1).broadcast(Buffers.vector(DType.FLOAT32, 10), 1);
                    mentions = new String[] {"root"};
                    for (Future<Void> f : List.of(f0, f1)) {
                        try {
                            f.await(FAIL_FAST_SECONDS, TimeUnit.SECONDS);
                        } catch (Exception e) {
                            assertInstanceOf(CollectiveMismatchException.class, f.cause(), "a broadcast whose"
                                    + " peer named another root either completes or fails with a mismatch");
                        }
                    }
                    f0 = ranks.get(0).barrier();
                    f1 = ranks.get(1).barrier();
                }
            }
            for (Future<Void> f : List.of(f0, f1)) {
                Throwable t = failureOf(f, FAIL_FAST_SECONDS, "a collective with a different " + what);
                assertInstanceOf(CollectiveMismatchException.class, t);
                assertMentions(t.getMessage(), "rank 0", "rank 1");
                assertMentions(t.getMessage(), mentions);
            }
            assertFailsFast(ranks.get(0), "a mismatch");
        }
    }

    @Test
    void aMismatchWhereNoMessageCrossesFailsWithinTheTimeout() throws Exception {
        // Rank 0 gathers to itself and rank 1 waits for a scatter from rank 0: both only receive.
        try (Ranks ranks = ranks(2, SHORT_TIMEOUT)) {
            Future<Void> gather = ranks.get(0).gather(List.of(Buffers.vector(DType.FLOAT32, 4),
                    Buffers.vector(DType.FLOAT32, 4)), Buffers.vector(DType.FLOAT32, 4), 0);
            Future<Void> scatter = ranks.get(1).scatter(Buffers.vector(DType.FLOAT32, 4), List.of(), 0);
            for (Future<Void> f : List.of(gather, scatter)) {
                Throwable t = failureOf(f, SHORT_TIMEOUT.toSeconds() + 8, "a mismatch with no message");
                assertInstanceOf(CollectiveMismatchException.class, t);
                assertMentions(t.getMessage(), "gather", "scatter", "rank 0", "rank 1");
            }
        }
    }

    @Test
    void aCollectiveOneRankNeverJoinsTimesOutNamingThatRank() throws Exception {
        try (Ranks ranks = ranks(3, SHORT_TIMEOUT)) {
            List<Future<Void>> fs = List.of(
                    ranks.get(0).allReduce(Buffers.vector(DType.FLOAT32, 10), ReduceOp.SUM),
                    ranks.get(1).allReduce(Buffers.vector(DType.FLOAT32, 10), ReduceOp.SUM));
            for (int r = 0; r < 2; r++) {
                Throwable t = failureOf(fs.get(r), SHORT_TIMEOUT.toSeconds() + 8, "an allReduce rank 2 never joins");
                CommunicationTimeoutException e = assertInstanceOf(CommunicationTimeoutException.class, t);
                assertArrayEquals(new int[] {2}, e.missingRanks(), "missing ranks seen by rank " + r + ": "
                        + e.getMessage());
                assertMentions(e.getMessage(), "rank 2", "allReduce");
            }
            assertFailsFast(ranks.get(0), "a timeout");
            assertFailsFast(ranks.get(1), "a timeout");
        }
    }

    @Test
    void closingARankFailsThePeersInsideAnAllReduceWithPeerLost() throws Exception {
        try (Ranks ranks = ranks(3)) {
            List<Future<Void>> fs = new ArrayList<>();
            for (int r = 0; r < 2; r++) {
                fs.add(ranks.get(r).allReduce(Reference.input(DType.FLOAT32, ReduceOp.SUM, r, 3, 300_001),
                        ReduceOp.SUM));
            }
            Thread.sleep(200);
            assertFalse(fs.get(0).isComplete() || fs.get(1).isComplete(), "allReduce finished without rank 2");
            ranks.get(2).close().await(10, TimeUnit.SECONDS);
            for (int r = 0; r < 2; r++) {
                Throwable t = failureOf(fs.get(r), FAIL_FAST_SECONDS, "an allReduce whose peer closed");
                PeerLostException e = assertInstanceOf(PeerLostException.class, t);
                assertEquals(2, e.peer(), e.getMessage());
                assertMentions(e.getMessage(), "rank 2");
            }
            for (int r = 0; r < 2; r++) {
                for (Throwable t : assertFailsFast(ranks.get(r), "losing rank 2")) {
                    assertInstanceOf(PeerLostException.class, t, "a later operation after losing a peer");
                }
            }
        }
    }

    @Test
    void aRecvFromARankThatClosedFailsFastButItsEarlierMessagesArrive() throws Exception {
        try (Ranks ranks = ranks(3)) {
            ranks.get(2).send(numbered(6, 2), 0, 1).await(10, TimeUnit.SECONDS);
            ranks.get(2).close().await(10, TimeUnit.SECONDS);
            DeviceBuffer got = Buffers.vector(DType.INT32, 6);
            assertEquals(2, ranks.get(0).recv(got, 2, 1).await(10, TimeUnit.SECONDS),
                    "a message sent before its sender closed is still received");
            assertSameBytes(numbered(6, 2), got, "the message sent before closing");
            Thread.sleep(100);
            Throwable t = failureOf(ranks.get(0).recv(Buffers.vector(DType.INT32, 6), 2, 1), FAIL_FAST_SECONDS,
                    "a recv from a rank that closed");
            PeerLostException e = assertInstanceOf(PeerLostException.class, t);
            assertEquals(2, e.peer(), e.getMessage());
            t = failureOf(ranks.get(1).send(Buffers.vector(DType.INT32, 6), 2, 1), FAIL_FAST_SECONDS,
                    "a send to a rank that closed");
            assertInstanceOf(CommunicationException.class, t);
        }
    }

    @Test
    void operationsOnAClosedGroupFailFast() throws Exception {
        try (Ranks ranks = ranks(2)) {
            ranks.get(0).close().await(10, TimeUnit.SECONDS);
            ranks.get(0).close().await(10, TimeUnit.SECONDS); // idempotent
            assertFailsFast(ranks.get(0), "closing it");
            for (Throwable t : assertFailsFast(ranks.get(1), "its peer closed")) {
                PeerLostException e = assertInstanceOf(PeerLostException.class, t);
                assertEquals(0, e.peer(), e.getMessage());
            }
        }
    }
}
