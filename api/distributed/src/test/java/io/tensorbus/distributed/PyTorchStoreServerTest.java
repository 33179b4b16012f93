package io.tensorbus.distributed;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tensorbus.spi.contract.TorchPython;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.net.NetSocket;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The JVM hosts the store, PyTorch (Debian's {@code python3-torch}, 1.13) is the client: its TCPStore calls, and a
 * whole {@code init_process_group("gloo", store=...)} of one rank with an all-reduce, run against it while a JVM
 * client shares the keys. Skipped, saying why, where Python's torch is missing.
 */
class PyTorchStoreServerTest {
    private static final Path PYTHON = TorchPython.PYTHON;
    private static final String CLIENT = String.join("\n",
            "import datetime, os, sys, torch",
            "import torch.distributed as dist",
            "libuv = {'use_libuv': False} if os.environ.get('USE_LIBUV') == '0' else {}  # 2.x built without libuv",
            "s = dist.TCPStore('127.0.0.1', int(sys.argv[1]), 2, False, datetime.timedelta(seconds=30),",
            "                  wait_for_workers=False, **libuv)",
            "assert s.get('from_java') == b'hello', s.get('from_java')",
            "s.set('from_python', b'world')",
            "assert s.add('counter', 2) == 7, 'Java added 5 first'",
            "assert s.compare_set('cas', b'', b'x') == b'x'",
            "assert s.compare_set('cas', b'y', b'z') == b'x'",
            "assert s.delete_key('cas') and not s.delete_key('cas')",
            "n = s.num_keys()",
            "dist.init_process_group('gloo', store=dist.PrefixStore('job', s), rank=0, world_size=1,",
            "                        timeout=datetime.timedelta(seconds=30))",
            "t = torch.ones(4)",
            "dist.all_reduce(t)",
            "assert t.tolist() == [1.0] * 4",
            "dist.destroy_process_group()",
            "assert s.num_keys() > n, 'init_process_group wrote its keys here'",
            "print('python ok', flush=True)");

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void aPyTorchClientAndItsProcessGroupRunOnAJvmHostedStore() throws Exception {
        PyTorchWire wire = PyTorchWire.forVersion(TorchPython.assumeTorch());
        Vertx vertx = Distributed.newVertx();
        try (PyTorchStoreServer server = PyTorchStoreServer.start(vertx, "127.0.0.1", 0)
                .await(10, TimeUnit.SECONDS)) {
            PyTorchTcpStore jvm = PyTorchTcpStore.connect(vertx, "127.0.0.1", server.port(), Duration.ofSeconds(60),
                    wire)
                    .await(10, TimeUnit.SECONDS);
            jvm.set("from_java", "hello".getBytes(StandardCharsets.UTF_8)).await(10, TimeUnit.SECONDS);
            assertEquals(5, jvm.add("counter", 5).await(10, TimeUnit.SECONDS));
            ProcessBuilder pb = new ProcessBuilder(PYTHON.toString(), "-c", CLIENT, Integer.toString(server.port()))
                    .redirectErrorStream(true);
            pb.environment().put("GLOO_SOCKET_IFNAME", "lo");
            Process python = pb.start();
            try (BufferedReader out = new BufferedReader(new InputStreamReader(python.getInputStream(),
                    StandardCharsets.UTF_8))) {
                assertTrue(python.waitFor(90, TimeUnit.SECONDS), "Python ends");
                String printed = out.lines().collect(Collectors.joining("\n"));
                Assumptions.assumeFalse(printed.contains("No module named 'torch"),
                        "skipped: Python has no torch (apt-get install python3-torch)");
                assertEquals(0, python.exitValue(), printed);
                assertTrue(printed.contains("python ok"), printed);
            } finally {
                python.destroyForcibly();
            }
            assertArrayEquals("world".getBytes(StandardCharsets.UTF_8), jvm.get("from_python")
                    .await(10, TimeUnit.SECONDS));
            assertArrayEquals("7".getBytes(StandardCharsets.US_ASCII), jvm.get("counter").await(10, TimeUnit.SECONDS));
            jvm.close();
        } finally {
            vertx.close().await(10, TimeUnit.SECONDS);
        }
    }

    /** A key watch (1.13's WATCH_KEY) is not served: the connection is closed, and other clients go on. */
    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS)
    void aRequestItDoesNotServeClosesThatConnectionOnly() throws Exception {
        Vertx vertx = Distributed.newVertx();
        try (PyTorchStoreServer server = PyTorchStoreServer.start(vertx, "127.0.0.1", 0)
                .await(10, TimeUnit.SECONDS)) {
            NetSocket raw = vertx.createNetClient().connect(server.port(), "127.0.0.1").await(10, TimeUnit.SECONDS);
            Promise<Void> closed = Promise.promise();
            raw.closeHandler(v -> closed.tryComplete());
            raw.write(Buffer.buffer().appendByte((byte) 7).appendLongLE(2).appendString("/k"));
            closed.future().await(10, TimeUnit.SECONDS);
            PyTorchTcpStore jvm = PyTorchTcpStore.connect(vertx, "127.0.0.1", server.port(), Duration.ofSeconds(5),
                    PyTorchWire.V1_13)
                    .await(10, TimeUnit.SECONDS);
            jvm.set("k", new byte[] {1}).await(10, TimeUnit.SECONDS);
            assertArrayEquals(new byte[] {1}, jvm.get("k").await(10, TimeUnit.SECONDS));
            jvm.close();
        } finally {
            vertx.close().await(10, TimeUnit.SECONDS);
        }
    }

    @Test
    void badArgumentsSayWhatIsAllowed() {
        Vertx vertx = Vertx.vertx();
        try {
            IllegalArgumentException port = assertThrows(IllegalArgumentException.class,
                    () -> PyTorchStoreServer.start(vertx, "127.0.0.1", 70000));
            assertTrue(port.getMessage().contains("0..65535"), port.getMessage());
        } finally {
            vertx.close();
        }
    }
}
