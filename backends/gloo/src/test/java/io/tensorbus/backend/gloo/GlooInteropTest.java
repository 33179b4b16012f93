package io.tensorbus.backend.gloo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tensorbus.DType;
import io.tensorbus.c10d.CollectiveMismatchException;
import io.tensorbus.c10d.Store;
import io.tensorbus.distributed.PrefixStore;
import io.tensorbus.distributed.PyTorchStoreServer;
import io.tensorbus.distributed.PyTorchTcpStore;
import io.tensorbus.distributed.PyTorchWire;
import io.tensorbus.spi.Backend;
import io.tensorbus.spi.BackendOptions;
import io.tensorbus.spi.contract.Buffers;
import io.tensorbus.spi.contract.TorchPython;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * JVM ranks of the gloo backend and PyTorch ranks (Debian's {@code python3-torch} 1.13, or the PyTorch
 * {@link TorchPython#ENV} names, its ProcessGroupGloo) in one job: every op of {@code gloo_script.txt} with the same
 * generated data on both sides, each side checking its results; the store hosted by Python in one test and by the
 * JVM in the others. Skipped, saying why, where Python has no torch.
 */
class GlooInteropTest {
    private static final Path PYTHON = TorchPython.PYTHON;
    private static final Duration TIMEOUT = Duration.ofSeconds(60);
    @TempDir
    Path dir;
    private Vertx vertx;
    private final List<Process> pythons = new ArrayList<>();
    private PyTorchWire wire;

    @BeforeEach
    void start() throws Exception {
        wire = PyTorchWire.forVersion(TorchPython.assumeTorch());
        for (String f : List.of("gloo_peer.py", "gloo_script.txt")) {
            try (InputStream in = getClass().getResourceAsStream(f)) {
                Files.write(dir.resolve(f), in.readAllBytes());
            }
        }
        vertx = Vertx.vertx();
    }

    @AfterEach
    void stop() throws Exception {
        pythons.forEach(Process::destroyForcibly);
        if (vertx != null) {
            vertx.close().await(10, TimeUnit.SECONDS);
        }
    }

    @Test
    @Timeout(value = 180, unit = TimeUnit.SECONDS)
    void aJvmRankAndAPythonRankAgreeOnEveryOpWithPythonHostingTheStore() throws Exception {
        Process host = python(0, 2, 0, true, null);
        int port = portOf(host);
        runJob(port, 2, new int[] {1}, List.of(host));
    }

    @Test
    @Timeout(value = 180, unit = TimeUnit.SECONDS)
    void aJvmRankAndAPythonRankAgreeOnEveryOpWithTheJvmHostingTheStore() throws Exception {
        try (PyTorchStoreServer server = PyTorchStoreServer.start(vertx, "127.0.0.1", 0).await(10, TimeUnit.SECONDS)) {
            runJob(server.port(), 2, new int[] {0}, List.of(python(server.port(), 2, 1, false, null)));
        }
    }

    @Test
    @Timeout(value = 240, unit = TimeUnit.SECONDS)
    void twoJvmRanksAndTwoPythonRanksAgreeOnEveryOp() throws Exception {
        try (PyTorchStoreServer server = PyTorchStoreServer.start(vertx, "127.0.0.1", 0).await(10, TimeUnit.SECONDS)) {
            runJob(server.port(), 4, new int[] {0, 3}, List.of(python(server.port(), 4, 1, false, null),
                    python(server.port(), 4, 2, false, null)));
        }
    }

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void aJvmBroadcastAgainstAPythonAllReduceFailsOnTheJvmNamingBoth() throws Exception {
        Path script = dir.resolve("mismatch.txt");
        Files.writeString(script, "allreduce float32 SUM 1000\n");
        try (PyTorchStoreServer server = PyTorchStoreServer.start(vertx, "127.0.0.1", 0).await(10, TimeUnit.SECONDS)) {
            python(server.port(), 2, 1, false, script);
            Backend jvm = join(server.port(), 2, 0).await(90, TimeUnit.SECONDS);
            long started = System.nanoTime();
            Throwable e = assertThrows(jvm.broadcast(Buffers.alloc(DType.FLOAT32, 1000), 0));
            assertInstanceOf(CollectiveMismatchException.class, e);
            assertTrue(e.getMessage().contains("allReduce") && e.getMessage().contains("broadcast"), e.getMessage());
            assertTrue(System.nanoTime() - started < TIMEOUT.toNanos(), "failed before the timeout");
            jvm.close().await(10, TimeUnit.SECONDS);
        }
    }

    /** Runs the script on the JVM ranks {@code jvmRanks} while the Python processes run it too; all must pass. */
    private void runJob(int port, int world, int[] jvmRanks, List<Process> python) throws Exception {
        List<CompletableFuture<Void>> runs = new ArrayList<>();
        List<String[]> steps = GlooScript.load("gloo_script.txt");
        // A thread per JVM rank: each blocks on its ops, and the common pool may have one thread only.
        ExecutorService threads = Executors.newFixedThreadPool(jvmRanks.length);
        for (int rank : jvmRanks) {
            Future<Backend> joined = join(port, world, rank);
            runs.add(CompletableFuture.runAsync(() -> {
                try {
                    Backend b = joined.await(90, TimeUnit.SECONDS);
                    try {
                        new GlooScript(b).run(steps);
                    } finally {
                        // Right after its last op, as a rank ends: ranks still passing that op on must not fail.
                        b.close().await(10, TimeUnit.SECONDS);
                    }
                } catch (Exception e) {
                    throw new CompletionException(e);
                }
            }, threads));
        }
        threads.shutdown();
        AssertionError failed = null;
        for (int i = 0; i < runs.size(); i++) {
            try {
                runs.get(i).get(failed == null ? 150 : 70, TimeUnit.SECONDS);
            } catch (Exception e) {
                // Every JVM rank's failure is kept: the first one in rank order may only echo another's.
                AssertionError mine = new AssertionError("JVM rank " + jvmRanks[i] + " failed", e);
                if (failed == null) {
                    failed = mine;
                } else {
                    failed.addSuppressed(mine);
                }
            }
        }
        if (failed != null) {
            for (Process p : python) {
                p.waitFor(70, TimeUnit.SECONDS);
            }
            throw new AssertionError("a JVM rank failed; the Python ranks printed:\n" + output(), failed);
        }
        for (Process p : python) {
            boolean ended = p.waitFor(60, TimeUnit.SECONDS);
            String printed = output();
            assertTrue(ended, "Python ends: " + printed);
            assertEquals(0, p.exitValue(), printed);
            assertTrue(printed.contains("ok after"), printed);
        }
    }

    /**
     * A JVM rank joins the job as PyTorch's {@code init_process_group(store=PrefixStore('default_pg', s))} does: the
     * gloo group under {@code default_pg/0} (2.2+: {@code default_pg/0//cpu/}), then on 1.13 the store-based barrier,
     * and on rank 0 the sequence number.
     */
    private Future<Backend> join(int port, int world, int rank) {
        return PyTorchTcpStore.connect(vertx, "127.0.0.1", port, TIMEOUT, wire).compose(store -> {
            // 2.2+ joins the group's name and its device with a trailing '/': default_pg/0//cpu//...
            Store group = new PrefixStore(wire == PyTorchWire.V1_13 ? "default_pg/0" : "default_pg/0//cpu/", store);
            BackendOptions options = new BackendOptions(rank, world, group, TIMEOUT, "default_pg", null, vertx,
                    Map.of(GlooRendezvous.WIRE_PROPERTY, wire.name()));
            return new GlooBackendProvider().create(options)
                    // 2.2+ runs no store-based barrier after init (TORCH_DIST_INIT_BARRIER is off by default).
                    .compose(b -> wire == PyTorchWire.V1_13 ? storeBarrier(store, world).map(v -> b)
                            : Future.succeededFuture(b))
                    .compose(b -> rank != 0 ? Future.succeededFuture(b)
                            : group.set("SEQ_NUM_STORE_KEY", new byte[] {1, 0, 0, 0, 0, 0, 0, 0}).map(v -> b));
        });
    }

    private Future<Void> storeBarrier(Store store, int world) {
        String key = "default_pg/store_based_barrier_key:1";
        return store.add(key, 1).compose(n -> untilCount(store, key, world));
    }

    private Future<Void> untilCount(Store store, String key, int world) {
        return store.add(key, 0).compose(n -> n >= world ? Future.succeededFuture()
                : vertx.timer(10).compose(t -> untilCount(store, key, world)));
    }

    private Process python(int port, int world, int rank, boolean host, Path script) throws IOException {
        List<String> cmd = new ArrayList<>(List.of(PYTHON.toString(), dir.resolve("gloo_peer.py").toString(),
                "127.0.0.1", Integer.toString(port), Integer.toString(rank), Integer.toString(world),
                host ? "host" : "client"));
        if (script != null) {
            cmd.add(script.toString());
        }
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true)
                .redirectOutput(dir.resolve("python" + rank + ".log").toFile());
        pb.environment().put("GLOO_SOCKET_IFNAME", "lo");
        Process p = pb.start();
        pythons.add(p);
        return p;
    }

    private int portOf(Process host) throws Exception {
        Path log = dir.resolve("python0.log");
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (System.nanoTime() < deadline) {
            for (String line : Files.readAllLines(log)) {
                if (line.startsWith("port ")) {
                    return Integer.parseInt(line.substring(5).trim());
                }
            }
            assertTrue(host.isAlive(), "the Python host ended: " + Files.readString(log));
            Thread.sleep(50);
        }
        throw new AssertionError("the Python host printed no port: " + Files.readString(log));
    }

    private String output() throws IOException {
        StringBuilder all = new StringBuilder();
        for (Path log : Files.newDirectoryStream(dir, "python*.log")) {
            all.append(log.getFileName()).append(": ").append(Files.readString(log)).append('\n');
        }
        return all.toString();
    }

    private static Throwable assertThrows(Future<?> f) throws Exception {
        try {
            f.await(90, TimeUnit.SECONDS);
        } catch (CompletionException e) {
            return e.getCause();
        } catch (RuntimeException e) {
            return e;
        }
        throw new AssertionError("expected a failure");
    }
}
