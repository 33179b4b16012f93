package io.tensorbus.distributed;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tensorbus.spi.contract.TorchPython;
import io.vertx.core.Vertx;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The client against a TCPStore that PyTorch hosts (Debian's {@code python3-torch}, 1.13): Python sets, Java reads;
 * Java sets, Python reads; counters, compare-set, check, deletion and a wait that times out, after which the client
 * goes on on a new connection. Skipped, saying why, where Python's torch is missing.
 */
class PyTorchTcpStoreTest {
    private static final Path PYTHON = TorchPython.PYTHON;
    private static final String HOST = String.join("\n",
            "import datetime, sys",
            "from torch.distributed import TCPStore",
            "import os",
            "libuv = {'use_libuv': False} if os.environ.get('USE_LIBUV') == '0' else {}  # 2.x built without libuv",
            "s = TCPStore('127.0.0.1', 0, 2, True, datetime.timedelta(seconds=60), wait_for_workers=False, **libuv)",
            "print(s.port, flush=True)",
            "s.set('from_python', b'hello')",
            "assert s.get('from_java') == b'world', s.get('from_java')",
            "s.wait(['done'])",
            "assert s.add('counter', 0) == 15",
            "print('python ok', flush=True)");

    /** Skips, saying why, without a Python with torch; answers the wire of its version. */
    private static PyTorchWire assumeTorch() throws Exception {
        return PyTorchWire.forVersion(TorchPython.assumeTorch());
    }

    @Test
    @Timeout(value = 90, unit = TimeUnit.SECONDS)
    void aJvmClientSharesKeysWithPythonThroughAPyTorchHostedStore() throws Exception {
        PyTorchWire wire = assumeTorch();
        Process python = new ProcessBuilder(PYTHON.toString(), "-c", HOST).redirectErrorStream(true).start();
        Vertx vertx = Distributed.newVertx();
        try (BufferedReader out = new BufferedReader(new InputStreamReader(python.getInputStream(),
                StandardCharsets.UTF_8))) {
            int port = Integer.parseInt(out.readLine().trim());
            PyTorchTcpStore store = PyTorchTcpStore.connect(vertx, "127.0.0.1", port, Duration.ofSeconds(30), wire)
                    .await(30, TimeUnit.SECONDS);
            try {
                assertArrayEquals("hello".getBytes(StandardCharsets.UTF_8), store.get("from_python")
                        .await(30, TimeUnit.SECONDS));
                store.set("from_java", "world".getBytes(StandardCharsets.UTF_8)).await(30, TimeUnit.SECONDS);
                assertEquals(10, store.add("counter", 10).await(30, TimeUnit.SECONDS));
                assertEquals(15, store.add("counter", 5).await(30, TimeUnit.SECONDS));
                assertArrayEquals("15".getBytes(StandardCharsets.US_ASCII), store.get("counter")
                        .await(30, TimeUnit.SECONDS), "PyTorch keeps counters as decimal text, as our stores do");
                assertArrayEquals(new byte[] {2}, store.compareSet("cas", new byte[0], new byte[] {2})
                        .await(30, TimeUnit.SECONDS), "an absent key matches an empty expected value");
                assertArrayEquals(new byte[] {2}, store.compareSet("cas", new byte[] {9}, new byte[] {3})
                        .await(30, TimeUnit.SECONDS), "a wrong expected value changes nothing");
                assertTrue(store.check(List.of("from_python", "cas")).await(30, TimeUnit.SECONDS));
                assertFalse(store.check(List.of("from_python", "absent")).await(30, TimeUnit.SECONDS));
                assertTrue(store.deleteKey("cas").await(30, TimeUnit.SECONDS));
                assertFalse(store.deleteKey("cas").await(30, TimeUnit.SECONDS));
                assertTrue(store.numKeys().await(30, TimeUnit.SECONDS) >= 3, "from_python, from_java, counter");
                TimeoutException late = assertThrows(TimeoutException.class, () -> store.wait(List.of("never"),
                        Duration.ofMillis(300)).await(30, TimeUnit.SECONDS));
                assertTrue(late.getMessage().contains("wait for keys [never] timed out after 300 ms"),
                        late.getMessage());
                assertArrayEquals("hello".getBytes(StandardCharsets.UTF_8), store.get("from_python")
                        .await(30, TimeUnit.SECONDS), "a new connection after the timed-out wait");
                store.set("done", new byte[0]).await(30, TimeUnit.SECONDS);
            } finally {
                store.close();
            }
            assertTrue(python.waitFor(60, TimeUnit.SECONDS), "Python ends");
            assertEquals("python ok", out.readLine(), "Python saw Java's key and counter");
            assertEquals(0, python.exitValue());
        } finally {
            python.destroyForcibly();
            vertx.close().await(10, TimeUnit.SECONDS);
        }
    }

    @Test
    void badArgumentsSayWhatIsAllowed() {
        Vertx vertx = Vertx.vertx();
        try {
            IllegalArgumentException port = assertThrows(IllegalArgumentException.class,
                    () -> PyTorchTcpStore.connect(vertx, "127.0.0.1", 0, Duration.ofSeconds(1), PyTorchWire.V1_13));
            assertTrue(port.getMessage().contains("1..65535"), port.getMessage());
            assertThrows(IllegalArgumentException.class,
                    () -> PyTorchTcpStore.connect(vertx, "127.0.0.1", 29500, Duration.ZERO, PyTorchWire.V1_13));
        } finally {
            vertx.close();
        }
    }
}
