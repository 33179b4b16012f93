package io.tensorbus.backend.gloo;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tensorbus.c10d.JobSecret;
import io.tensorbus.c10d.ReduceOp;
import io.tensorbus.distributed.Distributed;
import io.tensorbus.distributed.InitOptions;
import io.tensorbus.distributed.ProcessGroup;
import io.tensorbus.distributed.PyTorchWire;
import io.tensorbus.tensor.Tensor;
import io.tensorbus.spi.contract.TorchPython;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code Distributed.initProcessGroup} with {@code pytorchInterop} meets Python's own
 * {@code init_process_group("gloo", init_method="tcp://...")} (Debian's python3-torch 1.13), whichever side is rank
 * 0 and hosts the store, and the group carries an all-reduce, a broadcast, a ring of sends and a barrier. Skipped,
 * saying why, where Python has no torch.
 */
class PyTorchInteropInitTest {
    private static final Path PYTHON = TorchPython.PYTHON;
    private static final String PEER = String.join("\n",
            "import datetime, os, sys, torch",
            "import torch.distributed as dist",
            "port, rank, world = map(int, sys.argv[1:4])",
            "dist.init_process_group('gloo', init_method='tcp://127.0.0.1:%d' % port, rank=rank, world_size=world,",
            "                        timeout=datetime.timedelta(seconds=60))",
            "t = torch.arange(6, dtype=torch.float32) * (rank + 1)",
            "dist.all_reduce(t)",
            "assert t.tolist() == [i * world * (world + 1) / 2 for i in range(6)], t",
            "w = torch.tensor([1.5, 2.5, 3.5, 4.5]) if rank == 0 else torch.zeros(4)",
            "dist.broadcast(w, 0)",
            "assert w.tolist() == [1.5, 2.5, 3.5, 4.5], w",
            "out = torch.zeros(3, dtype=torch.int64)",
            "req = dist.isend(torch.tensor([rank, rank * 10, rank * 100]), (rank + 1) % world, tag=5)",
            "src = (rank + world - 1) % world",
            "dist.recv(out, src, tag=5)",
            "req.wait()",
            "assert out.tolist() == [src, src * 10, src * 100], out",
            "dist.barrier()",
            "dist.destroy_process_group()",
            "print('python rank %d ok' % rank, flush=True)");
    /** MIN and MAX where NaNs and zeros of both signs meet; prints the results' bits. */
    private static final String MIN_MAX = String.join("\n",
            "import datetime, sys, torch",
            "import torch.distributed as dist",
            "port, rank, world = map(int, sys.argv[1:4])",
            "dist.init_process_group('gloo', init_method='tcp://127.0.0.1:%d' % port, rank=rank, world_size=world,",
            "                        timeout=datetime.timedelta(seconds=60))",
            "n = float('nan')",
            "x = [n, 1.0, 0.0, -0.0, 2.0, n, -0.0, 5.0] if rank == 0 else [1.0, n, -0.0, 0.0, n, 3.0, 0.0, -5.0]",
            "a, b = torch.tensor(x), torch.tensor(x)",
            "dist.all_reduce(a, op=dist.ReduceOp.MIN)",
            "dist.all_reduce(b, op=dist.ReduceOp.MAX)",
            "print('bits', ' '.join('%08x' % (v & 0xffffffff) for v in torch.cat([a, b]).view(torch.int32).tolist()),",
            "      flush=True)",
            "dist.destroy_process_group()");
    /** Three groups made by new_group, as the JVM rank makes them: all ranks, rank 1 alone, all ranks again. */
    private static final String SUBGROUPS = String.join("\n",
            "import datetime, sys, torch",
            "import torch.distributed as dist",
            "port, rank, world = map(int, sys.argv[1:4])",
            "dist.init_process_group('gloo', init_method='tcp://127.0.0.1:%d' % port, rank=rank, world_size=world,",
            "                        timeout=datetime.timedelta(seconds=60))",
            "g1 = dist.new_group([0, 1])",
            "g2 = dist.new_group([1])",
            "g3 = dist.new_group([0, 1])",
            "t = torch.tensor([rank + 1.0, 10.0])",
            "dist.all_reduce(t, group=g1)",
            "assert t.tolist() == [3.0, 20.0], t",
            "u = torch.tensor([7, 8]) if rank == 0 else torch.zeros(2, dtype=torch.int64)",
            "dist.broadcast(u, 0, group=g3)",
            "assert u.tolist() == [7, 8], u",
            "dist.barrier(group=g3)",
            "dist.destroy_process_group()",
            "print('python rank %d ok' % rank, flush=True)");
    @TempDir
    Path dir;
    private Vertx vertx;
    private Process python;
    private PyTorchWire wire;

    @BeforeEach
    void start() throws Exception {
        wire = PyTorchWire.forVersion(TorchPython.assumeTorch());
        vertx = Vertx.vertx();
    }

    @AfterEach
    void stop() throws Exception {
        if (python != null) {
            python.destroyForcibly();
        }
        if (vertx != null) {
            vertx.close().await(10, TimeUnit.SECONDS);
        }
    }

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void aJvmRankZeroHostsTheStoreForAPythonRank() throws Exception {
        int port = freePort();
        Future<ProcessGroup> jvm = init(port, 0, 2);
        python = python(port, 1, 2);
        runJvmSide(jvm.await(90, TimeUnit.SECONDS));
        pythonPassed();
    }

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void aJvmRankJoinsAStoreThatPythonRankZeroHosts() throws Exception {
        int port = freePort();
        python = python(port, 0, 2);
        runJvmSide(init(port, 1, 2).await(90, TimeUnit.SECONDS));
        pythonPassed();
    }

    /**
     * gloo reduces MIN and MAX with {@code std::min} and {@code std::max}, keeping this rank's value where a NaN or
     * zeros of both signs meet; a JVM rank in place of a Python one must leave the same bits as two Python ranks.
     */
    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void minAndMaxLeaveTheBitsTwoPythonRanksLeaveWhereNaNsAndSignedZerosMeet() throws Exception {
        int pure = freePort();
        Process p0 = script(MIN_MAX, pure, 0, 2, "pure0.log");
        Process p1 = script(MIN_MAX, pure, 1, 2, "pure1.log");
        String reference = bits(p0, "pure0.log");
        assertEquals(reference, bits(p1, "pure1.log"));

        int mixed = freePort();
        python = script(MIN_MAX, mixed, 0, 2, "python.log");
        try (ProcessGroup pg = init(mixed, 1, 2).await(90, TimeUnit.SECONDS)) {
            float n = Float.NaN;
            float[] x = {1.0f, n, -0.0f, 0.0f, n, 3.0f, 0.0f, -5.0f};
            Tensor a = Tensor.of(x.clone(), 8);
            Tensor b = Tensor.of(x.clone(), 8);
            pg.allReduce(a, ReduceOp.MIN).await(60, TimeUnit.SECONDS);
            pg.allReduce(b, ReduceOp.MAX).await(60, TimeUnit.SECONDS);
            StringBuilder jvm = new StringBuilder();
            for (float[] r : new float[][] {a.toFloatArray(), b.toFloatArray()}) {
                for (float v : r) {
                    jvm.append(jvm.isEmpty() ? "" : " ").append(String.format("%08x", Float.floatToRawIntBits(v)));
                }
            }
            assertEquals(reference, jvm.toString(), "the JVM rank's MIN then MAX");
            assertEquals(reference, bits(python, "python.log"), "the Python rank beside it");
        }
    }

    /** new_group's names, keys and barriers: groups made on both sides meet, a group without Python too. */
    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void groupsMadeByNewGroupOnBothSidesMeet() throws Exception {
        int port = freePort();
        python = script(SUBGROUPS, port, 0, 2, "python.log");
        try (ProcessGroup pg = init(port, 1, 2).await(90, TimeUnit.SECONDS)) {
            ProcessGroup g1 = Distributed.newGroup(pg, 0, 1).await(60, TimeUnit.SECONDS);
            ProcessGroup g2 = Distributed.newGroup(pg, 1).await(60, TimeUnit.SECONDS);
            ProcessGroup g3 = Distributed.newGroup(pg, 0, 1).await(60, TimeUnit.SECONDS);
            assertEquals(List.of("1", "2", "3"), List.of(g1.name(), g2.name(), g3.name()), "PyTorch's group names");
            Tensor t = Tensor.of(new float[] {2.0f, 10.0f}, 2);
            g1.allReduce(t).await(60, TimeUnit.SECONDS);
            assertArrayEquals(new float[] {3.0f, 20.0f}, t.toFloatArray());
            Tensor alone = Tensor.of(new float[] {5.0f}, 1);
            g2.allReduce(alone).await(60, TimeUnit.SECONDS);
            assertArrayEquals(new float[] {5.0f}, alone.toFloatArray());
            Tensor u = Tensor.of(new long[2], 2);
            g3.broadcast(u, 0).await(60, TimeUnit.SECONDS);
            assertArrayEquals(new long[] {7, 8}, u.toLongArray());
            g3.barrier().await(60, TimeUnit.SECONDS);
            pythonPassed();
        }
    }

    private Process script(String code, int port, int rank, int world, String log) throws IOException {
        ProcessBuilder pb = new ProcessBuilder(PYTHON.toString(), "-c", code, Integer.toString(port),
                Integer.toString(rank), Integer.toString(world)).redirectErrorStream(true)
                .redirectOutput(dir.resolve(log).toFile());
        pb.environment().put("GLOO_SOCKET_IFNAME", "lo");
        return pb.start();
    }

    private String bits(Process p, String log) throws Exception {
        boolean ended = p.waitFor(60, TimeUnit.SECONDS);
        String printed = Files.readString(dir.resolve(log));
        assertTrue(ended && p.exitValue() == 0, "Python ends well: " + printed);
        return printed.lines().filter(l -> l.startsWith("bits ")).findFirst()
                .orElseThrow(() -> new AssertionError("no bits in " + printed)).substring(5).trim();
    }

    private Future<ProcessGroup> init(int port, int rank, int world) {
        return Distributed.initProcessGroup(InitOptions.builder().backend("gloo").pytorchInterop(wire)
                .initMethod("tcp://127.0.0.1:" + port).rank(rank).worldSize(world).timeout(Duration.ofSeconds(60))
                .environment(Map.of()).secret(JobSecret.none()).vertx(vertx).build());
    }

    private static void runJvmSide(ProcessGroup pg) throws Exception {
        int rank = pg.rank();
        int world = pg.size();
        float[] values = new float[6];
        for (int i = 0; i < 6; i++) {
            values[i] = i * (rank + 1);
        }
        Tensor t = Tensor.of(values, 6);
        pg.allReduce(t).await(60, TimeUnit.SECONDS);
        for (int i = 0; i < 6; i++) {
            assertEquals(i * world * (world + 1) / 2f, t.toFloatArray()[i], "all-reduce element " + i);
        }
        Tensor w = rank == 0 ? Tensor.of(new float[] {1.5f, 2.5f, 3.5f, 4.5f}, 4) : Tensor.of(new float[4], 4);
        pg.broadcast(w, 0).await(60, TimeUnit.SECONDS);
        assertArrayEquals(new float[] {1.5f, 2.5f, 3.5f, 4.5f}, w.toFloatArray());
        Tensor out = Tensor.of(new long[3], 3);
        Future<Void> sent = pg.isend(Tensor.of(new long[] {rank, rank * 10L, rank * 100L}, 3), (rank + 1) % world, 5);
        int src = (rank + world - 1) % world;
        assertEquals(src, pg.irecv(out, src, 5).await(60, TimeUnit.SECONDS));
        sent.await(60, TimeUnit.SECONDS);
        assertArrayEquals(new long[] {src, src * 10L, src * 100L}, out.toLongArray());
        pg.barrier().await(60, TimeUnit.SECONDS);
        pg.destroy().await(10, TimeUnit.SECONDS);
    }

    private Process python(int port, int rank, int world) throws IOException {
        return script(PEER, port, rank, world, "python.log");
    }

    private void pythonPassed() throws Exception {
        boolean ended = python.waitFor(60, TimeUnit.SECONDS);
        String printed = Files.readString(dir.resolve("python.log"));
        assertTrue(ended, "Python ends: " + printed);
        assertEquals(0, python.exitValue(), printed);
        assertTrue(printed.contains("ok"), printed);
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }
}
