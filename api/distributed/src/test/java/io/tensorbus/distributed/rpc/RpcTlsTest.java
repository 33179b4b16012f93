package io.tensorbus.distributed.rpc;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufAllocatorMetricProvider;
import io.tensorbus.DType;
import io.tensorbus.tensor.Tensor;
import io.vertx.core.net.SelfSignedCertificate;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** RPC agents over mutual TLS in one JVM, with self-signed identities, meeting through one in-memory store. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RpcTlsTest {
    private static final Duration SHORT = Duration.ofSeconds(5);
    private final RpcWorkers workers = new RpcWorkers();
    private final List<SelfSignedCertificate> certificates = new ArrayList<>();

    @AfterEach
    void tearDown() throws Exception {
        workers.close();
        certificates.forEach(SelfSignedCertificate::delete);
    }

    /** A fresh self-signed identity (deleted after the test). */
    private SelfSignedCertificate identity() {
        SelfSignedCertificate c = SelfSignedCertificate.create();
        certificates.add(c);
        return c;
    }

    /** Options with mutual TLS where {@code c} is both this worker's identity and all it trusts. */
    private static RpcOptions.Builder tls(SelfSignedCertificate c) {
        return plain().tls(c.keyCertOptions(), c.trustOptions());
    }

    private static RpcOptions.Builder plain() {
        return RpcOptions.builder().registry(new RpcRegistry()).timeout(SHORT);
    }

    /** Starts {@code n} workers named worker0.. whose options come from {@code options(rank)}. */
    private List<RpcAgent> start(int n, IntFunction<RpcOptions.Builder> options) throws Exception {
        return workers.start(n, options).all();
    }

    /** A call from {@code from} to {@code to} fails at once (not by its timeout) naming the callee. */
    private static void refused(RpcAgent from, String to) {
        long t0 = System.nanoTime();
        RpcException e = assertThrows(RpcException.class, () -> from.rpcSync(to, "builtin.add", 1, 2));
        assertFalse(e instanceof RpcTimeoutException, "the call waited for its timeout: " + e.getMessage());
        assertTrue(System.nanoTime() - t0 < SHORT.toNanos(), "the refusal took too long");
        assertTrue(e.getMessage().contains(to), e.getMessage());
    }

    @Test
    void workersWithTlsCallEachOtherAndTensorsArriveWholeAndFramesAreReleased() throws Exception {
        SelfSignedCertificate job = identity();
        List<RpcAgent> w = start(2, r -> tls(job));
        assertTrue(w.get(0).options().usesTls());
        assertEquals(5L, (Long) w.get(0).rpcSync("worker1", "builtin.add", 2, 3));
        assertEquals(7.5, (Double) w.get(1).rpcSync("worker0", "builtin.add", 5.0, 2.5), 0.0);
        Tensor mib = Tensor.arange(0, 1 << 18, 1, DType.FLOAT32);
        Tensor back = w.get(0).rpcSync("worker1", "builtin.echo", mib);
        assertArrayEquals(mib.toFloatArray(), back.toFloatArray(), "1 MiB through TLS");
        Tensor again = w.get(1).rpcSync("worker0", "builtin.echo", mib);
        assertArrayEquals(mib.toFloatArray(), again.toFloatArray(), "and back the other way");
        for (int i = 0; i < 100; i++) {
            w.get(0).rpcSync("worker1", "builtin.echo", mib);
        }
        long used = ((ByteBufAllocatorMetricProvider) ByteBufAllocator.DEFAULT).metric().usedDirectMemory();
        assertTrue(used < 128L << 20, "100 frames of 1 MiB left " + (used >> 20) + " MiB of direct memory in use");
    }

    @Test
    void aWorkerWithoutTlsAndOneWithItRefuseEachOtherAndTheRestGoOn() throws Exception {
        SelfSignedCertificate job = identity();
        List<RpcAgent> w = start(3, r -> r == 2 ? plain() : tls(job));
        refused(w.get(0), "worker2");
        refused(w.get(2), "worker1");
        assertEquals(3L, (Long) w.get(0).rpcSync("worker1", "builtin.add", 1, 2), "the TLS workers still talk");
        assertEquals(4L, (Long) w.get(2).rpcSync("worker2", "builtin.add", 2, 2), "the plain worker lives");
        refused(w.get(1), "worker2");
    }

    @Test
    void workersWithTlsButIdentitiesTheOtherDoesNotTrustRefuseEachOther() throws Exception {
        SelfSignedCertificate a = identity();
        SelfSignedCertificate b = identity();
        List<RpcAgent> w = start(2, r -> tls(r == 0 ? a : b));
        refused(w.get(0), "worker1");
        refused(w.get(1), "worker0");
        assertEquals(6L, (Long) w.get(1).rpcSync("worker1", "builtin.mul", 2, 3), "the worker lives");
    }

    @Test
    void tlsRefusesMissingIdentityOrTrustNamingIt() {
        SelfSignedCertificate c = identity();
        NullPointerException noIdentity = assertThrows(NullPointerException.class,
                () -> RpcOptions.builder().tls(null, c.trustOptions()));
        assertEquals("identity", noIdentity.getMessage());
        NullPointerException noTrust = assertThrows(NullPointerException.class,
                () -> RpcOptions.builder().tls(c.keyCertOptions(), null));
        assertEquals("trust", noTrust.getMessage());
        assertFalse(RpcOptions.builder().build().usesTls());
        assertEquals(null, RpcOptions.builder().build().tlsIdentity());
    }
}
