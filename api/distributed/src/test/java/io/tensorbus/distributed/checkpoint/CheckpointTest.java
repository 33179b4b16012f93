package io.tensorbus.distributed.checkpoint;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tensorbus.DType;
import io.tensorbus.distributed.Distributed;
import io.tensorbus.io.TensorFormatException;
import io.tensorbus.nn.BatchNorm2d;
import io.tensorbus.nn.Conv2d;
import io.tensorbus.nn.Flatten;
import io.tensorbus.nn.Linear;
import io.tensorbus.nn.MSELoss;
import io.tensorbus.nn.Module;
import io.tensorbus.nn.ReLU;
import io.tensorbus.nn.Sequential;
import io.tensorbus.optim.Adam;
import io.tensorbus.optim.Optimizer;
import io.tensorbus.optim.OptimizerState;
import io.tensorbus.optim.SGD;
import io.tensorbus.tensor.Generator;
import io.tensorbus.tensor.Tensor;
import io.vertx.core.Context;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** Saving and resuming with {@link Checkpoint}, in one process and across ranks. */
class CheckpointTest {
    @TempDir
    Path tmp;

    /** A model with parameters and buffers (BatchNorm's running statistics and its int64 batch count). */
    private static Sequential model(long seed) {
        Generator g = new Generator(seed);
        return new Sequential(new Conv2d(1, 2, new int[] {3, 3}, new int[] {1, 1}, new int[] {1, 1},
                new int[] {1, 1}, 1, true, g), new BatchNorm2d(2), new ReLU(), new Flatten(),
                new Linear(2 * 4 * 4, 3, true, g));
    }

    static Stream<Function<List<Tensor>, Optimizer>> optimizers() {
        return Stream.of(
                p -> SGD.builder().lr(0.05).momentum(0.9).build(p),
                p -> Adam.builder().lr(0.01).amsgrad(true).build(p));
    }

    private static List<Tensor[]> batches(int count) {
        Generator g = new Generator(7);
        List<Tensor[]> out = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            out.add(new Tensor[] {Tensor.randn(g, DType.FLOAT32, 8, 1, 4, 4), Tensor.randn(g, DType.FLOAT32, 8, 3)});
        }
        return out;
    }

    private static double step(Module model, Optimizer opt, Tensor[] batch) {
        opt.zeroGrad();
        Tensor loss = new MSELoss().forward(model.forward(batch[0]), batch[1]);
        loss.backward();
        opt.step();
        return loss.item();
    }

    private static List<Double> train(Module model, Optimizer opt, List<Tensor[]> batches, int from, int to) {
        List<Double> losses = new ArrayList<>();
        for (int i = from; i < to; i++) {
            losses.add(step(model, opt, batches.get(i)));
        }
        return losses;
    }

    private static Map<String, double[]> values(Map<String, Tensor> tensors) {
        Map<String, double[]> out = new LinkedHashMap<>();
        tensors.forEach((k, t) -> out.put(k, t.toDoubleArray()));
        return out;
    }

    private static void assertSameValues(Map<String, Tensor> expected, Map<String, Tensor> actual) {
        assertEquals(expected.keySet(), actual.keySet());
        Map<String, double[]> e = values(expected);
        Map<String, double[]> a = values(actual);
        e.forEach((k, v) -> assertArrayEquals(v, a.get(k), k));
    }

    @ParameterizedTest
    @MethodSource("optimizers")
    void resumeContinuesTheSameLossCurve(Function<List<Tensor>, Optimizer> make) throws IOException {
        List<Tensor[]> batches = batches(10);
        Sequential straight = model(1);
        Optimizer a = make.apply(straight.parameters());
        train(straight, a, batches, 0, 4);
        Checkpoint.save(tmp, straight, a, Map.of("epoch", 1, "step", 4), null);
        List<Double> expected = train(straight, a, batches, 4, 10);

        Sequential resumed = model(2);
        Optimizer b = make.apply(resumed.parameters());
        Map<String, Object> extra = Checkpoint.load(tmp, resumed, b, null);
        assertEquals(Map.of("epoch", 1L, "step", 4L), extra);
        List<Double> actual = train(resumed, b, batches, 4, 10);
        for (int i = 0; i < expected.size(); i++) {
            assertEquals(expected.get(i), actual.get(i), 1e-6, "loss of step " + (4 + i));
        }
        assertSameValues(straight.stateDict(), resumed.stateDict());
    }

    @ParameterizedTest
    @MethodSource("optimizers")
    void roundTripRestoresModelOptimizerAndExtra(Function<List<Tensor>, Optimizer> make) throws IOException {
        Sequential m = model(3);
        Optimizer opt = make.apply(m.parameters());
        train(m, opt, batches(3), 0, 3);
        Map<String, Object> extra = new LinkedHashMap<>();
        extra.put("epoch", 3);
        extra.put("note", "after \"warm-up\"\n");
        extra.put("loss", 0.25);
        extra.put("done", false);
        extra.put("history", List.of(1.5, 2.5));
        extra.put("nothing", null);
        Checkpoint.save(tmp, m, opt, extra, null);
        assertTrue(Checkpoint.exists(tmp));
        try (Stream<Path> files = Files.list(tmp)) {
            assertEquals(List.of("checkpoint.json", "model.safetensors", "optimizer.safetensors"),
                    files.map(p -> p.getFileName().toString()).sorted().toList(), "no temporary file is left");
        }

        Sequential m2 = model(4);
        Optimizer opt2 = make.apply(m2.parameters());
        Map<String, Object> loaded = Checkpoint.load(tmp, m2, opt2, null);
        assertEquals(List.of("epoch", "note", "loss", "done", "history", "nothing"), List.copyOf(loaded.keySet()));
        assertEquals(3L, loaded.get("epoch"));
        assertEquals("after \"warm-up\"\n", loaded.get("note"));
        assertEquals(0.25, loaded.get("loss"));
        assertEquals(false, loaded.get("done"));
        assertEquals(List.of(1.5, 2.5), loaded.get("history"));
        assertEquals(null, loaded.get("nothing"));

        assertSameValues(m.stateDict(), m2.stateDict());
        assertTrue(m2.stateDict().containsKey("1.num_batches_tracked"));
        assertEquals(3, m2.stateDict().get("1.num_batches_tracked").toLongArray()[0]);
        OptimizerState s1 = opt.stateDict();
        OptimizerState s2 = opt2.stateDict();
        assertEquals(s1.paramGroups(), s2.paramGroups());
        assertSameValues(s1.toTensorMap(), s2.toTensorMap());
    }

    @Test
    void manifestHoldsFormatWorldSizeGroupsAndExtra() throws IOException {
        Sequential m = model(5);
        Optimizer opt = SGD.builder().lr(0.3).momentum(0.5).build(m.parameters());
        Checkpoint.save(tmp, m, opt, Map.of("epoch", 7), null);
        String json = Files.readString(tmp.resolve(Checkpoint.MANIFEST_FILE));
        assertTrue(json.startsWith("{\"format\":\"tensorbus-checkpoint\",\"format_version\":1,"), json);
        assertTrue(json.contains("\"world_size\":1"), json);
        assertTrue(json.contains("\"class\":\"io.tensorbus.optim.SGD\""), json);
        assertTrue(json.contains("\"lr\":0.3") && json.contains("\"momentum\":0.5"), json);
        assertTrue(json.contains("\"extra\":{\"epoch\":7}"), json);
    }

    @Test
    void modelOnlyCheckpointsAndReplacingAnEarlierOne() throws IOException {
        Sequential m = model(6);
        Optimizer opt = SGD.builder().lr(0.1).momentum(0.9).build(m.parameters());
        train(m, opt, batches(1), 0, 1);
        Checkpoint.save(tmp, m, opt, null, null);
        train(m, opt, batches(2), 1, 2);
        Checkpoint.save(tmp, m, null, Map.of("epoch", 2), null);
        assertFalse(Files.exists(tmp.resolve(Checkpoint.OPTIMIZER_FILE)), "the stale optimizer file is removed");

        Sequential m2 = model(7);
        assertEquals(Map.of("epoch", 2L), Checkpoint.load(tmp, m2, null, null));
        assertSameValues(m.stateDict(), m2.stateDict());
        Optimizer opt2 = SGD.builder().lr(0.1).momentum(0.9).build(m2.parameters());
        assertMessage(IllegalArgumentException.class, () -> Checkpoint.load(tmp, m2, opt2, null),
                "checkpoint.json", "no optimizer state");
    }

    @Test
    void theCheckpointDirectoryIsCreated() throws IOException {
        Path dir = tmp.resolve("runs/a/ckpt");
        Checkpoint.save(dir, model(8), null, null, null);
        assertTrue(Checkpoint.exists(dir));
        assertFalse(Checkpoint.exists(tmp.resolve("runs/b")));
    }

    // ---------------------------------------------------------------- errors

    private static <T extends Throwable> T assertMessage(Class<T> type, Executable call, String... parts) {
        T e = assertThrows(type, call);
        for (String part : parts) {
            assertTrue(e.getMessage().contains(part), e.getMessage());
        }
        return e;
    }

    private Path saved() throws IOException {
        Sequential m = model(9);
        Optimizer opt = Adam.builder().lr(0.01).build(m.parameters());
        train(m, opt, batches(1), 0, 1);
        Checkpoint.save(tmp, m, opt, Map.of("epoch", 0), null);
        return tmp;
    }

    @Test
    void missingFilesAreNamed() throws IOException {
        Sequential m = model(10);
        assertMessage(NoSuchFileException.class, () -> Checkpoint.load(tmp.resolve("nowhere"), m, null, null),
                "checkpoint.json", "missing");
        Path dir = saved();
        Files.delete(dir.resolve(Checkpoint.MODEL_FILE));
        assertMessage(NoSuchFileException.class, () -> Checkpoint.load(dir, m, null, null),
                "model.safetensors", "missing");
        Path dir2 = tmp.resolve("other");
        Files.createDirectories(dir2);
        Checkpoint.save(dir2, m, Adam.builder().build(m.parameters()), null, null);
        Files.delete(dir2.resolve(Checkpoint.OPTIMIZER_FILE));
        assertMessage(NoSuchFileException.class,
                () -> Checkpoint.load(dir2, model(11), Adam.builder().build(model(11).parameters()), null),
                "optimizer.safetensors", "missing");
    }

    @Test
    void corruptedFilesAreNamed() throws IOException {
        Path dir = saved();
        Path manifest = dir.resolve(Checkpoint.MANIFEST_FILE);
        String good = Files.readString(manifest);
        Sequential m = model(12);

        Files.writeString(manifest, good.substring(0, good.length() / 2));
        assertMessage(TensorFormatException.class, () -> Checkpoint.load(dir, m, null, null),
                "checkpoint.json", "invalid JSON");
        Files.writeString(manifest, "[1, 2]");
        assertMessage(TensorFormatException.class, () -> Checkpoint.load(dir, m, null, null),
                "checkpoint.json", "JSON object");
        Files.writeString(manifest, good.replace("\"format_version\":1", "\"format_version\":99"));
        assertMessage(TensorFormatException.class, () -> Checkpoint.load(dir, m, null, null),
                "checkpoint.json", "format_version", "99");
        Files.writeString(manifest, good.replace("tensorbus-checkpoint", "something-else"));
        assertMessage(TensorFormatException.class, () -> Checkpoint.load(dir, m, null, null),
                "checkpoint.json", "something-else");
        Files.writeString(manifest, good);

        Path model = dir.resolve(Checkpoint.MODEL_FILE);
        byte[] bytes = Files.readAllBytes(model);
        Files.write(model, Arrays.copyOf(bytes, bytes.length - 10));
        assertMessage(TensorFormatException.class, () -> Checkpoint.load(dir, m, null, null), "model.safetensors");
    }

    @Test
    void filesOfAnotherCheckpointAreRefused() throws IOException {
        Path first = saved();
        Path second = tmp.resolve("second");
        Sequential other = model(13);
        Checkpoint.save(second, other, null, null, null);
        // As if a save had been interrupted after moving the model file but before the manifest.
        Files.copy(second.resolve(Checkpoint.MODEL_FILE), first.resolve(Checkpoint.MODEL_FILE),
                StandardCopyOption.REPLACE_EXISTING);
        assertMessage(TensorFormatException.class, () -> Checkpoint.load(first, model(14), null, null),
                "model.safetensors", "belongs to checkpoint", "interrupted");
    }

    @Test
    void mismatchedModelOrOptimizerIsRefusedAndNothingChanges() throws IOException {
        Path dir = saved();
        Module wider = new Sequential(new Linear(4, 3, true, new Generator(1)));
        assertMessage(IllegalArgumentException.class, () -> Checkpoint.load(dir, wider, null, null),
                "model.safetensors", "missing keys", "unexpected keys");

        Sequential m = model(15);
        Map<String, double[]> before = values(m.stateDict());
        assertMessage(IllegalArgumentException.class,
                () -> Checkpoint.load(dir, m, SGD.builder().lr(0.1).build(m.parameters()), null),
                "io.tensorbus.optim.Adam", "io.tensorbus.optim.SGD");
        // An Adam over fewer parameters: the optimizer refuses after the model loaded; the model is put back.
        Optimizer partial = Adam.builder().build(m.parameters().subList(0, 2));
        assertMessage(IllegalArgumentException.class, () -> Checkpoint.load(dir, m, partial, null),
                "optimizer.safetensors", "parameters");
        Map<String, double[]> after = values(m.stateDict());
        before.forEach((k, v) -> assertArrayEquals(v, after.get(k), k));
    }

    @Test
    void badArgumentsSayWhatIsWrong() {
        Sequential m = model(16);
        assertMessage(IllegalArgumentException.class, () -> Checkpoint.save(null, m, null, null, null), "dir");
        assertMessage(IllegalArgumentException.class, () -> Checkpoint.save(tmp, null, null, null, null), "model");
        assertMessage(IllegalArgumentException.class, () -> Checkpoint.load(tmp, null, null, null), "model");
        assertMessage(IllegalArgumentException.class,
                () -> Checkpoint.save(tmp, m, null, Map.of("when", new Object()), null), "extra entry 'when'",
                "allowed");
        assertMessage(IllegalArgumentException.class,
                () -> Checkpoint.save(tmp, m, null, Map.of("nan", Double.NaN), null), "extra entry 'nan'");
        assertFalse(Checkpoint.exists(tmp), "nothing is written after a refused argument");
    }

    @Test
    void aWriteFailureIsAnIOException() throws IOException {
        Path file = tmp.resolve("a-file");
        Files.writeString(file, "not a directory");
        assertThrows(IOException.class, () -> Checkpoint.save(file, model(17), null, null, null));
    }

    // ---------------------------------------------------------------- ranks

    @Test
    void rankZeroSavesAndEveryRankLoadsTheSameState() {
        Path dir = tmp.resolve("ddp");
        Map<Integer, Map<String, double[]>> loaded = new ConcurrentHashMap<>();
        Map<Integer, Map<String, double[]>> optimizerState = new ConcurrentHashMap<>();
        Map<String, double[]> savedByRankZero = new ConcurrentHashMap<>();
        Distributed.spawn(2, pg -> {
            // Different initial values per rank: only the load makes them equal.
            Sequential m = model(100 + pg.rank());
            Optimizer opt = Adam.builder().lr(0.01).build(m.parameters());
            if (pg.rank() == 0) {
                train(m, opt, batches(2), 0, 2);
                savedByRankZero.putAll(values(m.stateDict()));
            }
            Checkpoint.save(dir, m, opt, Map.of("epoch", 5), pg);
            assertTrue(Checkpoint.exists(dir), "after save returns, every rank sees the checkpoint");

            Sequential fresh = model(200 + pg.rank());
            Optimizer freshOpt = Adam.builder().lr(0.01).build(fresh.parameters());
            Map<String, Object> extra = Checkpoint.load(dir, fresh, freshOpt, pg);
            assertEquals(Map.of("epoch", 5L), extra);
            loaded.put(pg.rank(), values(fresh.stateDict()));
            optimizerState.put(pg.rank(), values(freshOpt.stateDict().toTensorMap()));
        });
        assertTrue(new String(readManifest(dir), StandardCharsets.UTF_8).contains("\"world_size\":2"));
        for (int r = 0; r < 2; r++) {
            Map<String, double[]> mine = loaded.get(r);
            assertEquals(savedByRankZero.keySet(), mine.keySet());
            savedByRankZero.forEach((k, v) -> assertArrayEquals(v, mine.get(k), k));
        }
        Map<String, double[]> o0 = optimizerState.get(0);
        assertFalse(o0.isEmpty());
        o0.forEach((k, v) -> assertArrayEquals(v, optimizerState.get(1).get(k), k));
    }

    private static byte[] readManifest(Path dir) {
        try {
            return Files.readAllBytes(dir.resolve(Checkpoint.MANIFEST_FILE));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Test
    void theAsyncFormsRunFromAnEventLoopAndCompleteOnIt() throws Exception {
        Vertx vertx = Vertx.vertx();
        try {
            Sequential m = model(7);
            Optimizer opt = Adam.builder().lr(0.01).build(m.parameters());
            train(m, opt, batches(2), 0, 2);
            Sequential fresh = model(8);
            Optimizer freshOpt = Adam.builder().lr(0.01).build(fresh.parameters());
            Path dir = tmp.resolve("async");
            Promise<List<String>> threads = Promise.promise();
            Context context = vertx.getOrCreateContext();
            context.runOnContext(v -> {
                String loop = Thread.currentThread().getName();
                Checkpoint.saveAsync(dir, m, opt, Map.of("epoch", 2), null)
                        .compose(saved -> {
                            String afterSave = Thread.currentThread().getName();
                            return Checkpoint.loadAsync(dir, fresh, freshOpt, null)
                                    .map(extra -> List.of(loop, afterSave, Thread.currentThread().getName(),
                                            String.valueOf(extra.get("epoch"))));
                        })
                        .onComplete(threads);
            });
            List<String> seen = threads.future().await(30, TimeUnit.SECONDS);
            assertTrue(seen.get(0).startsWith("vert.x-eventloop"), seen.toString());
            assertEquals(seen.get(0), seen.get(1), "the save completed on the caller's context");
            assertEquals(seen.get(0), seen.get(2), "the load completed on the caller's context");
            assertEquals("2", seen.get(3));
            assertSameValues(m.stateDict(), fresh.stateDict());
        } finally {
            vertx.close().await(10, TimeUnit.SECONDS);
        }
    }

    @Test
    void theBlockingFormsRefuseAnEventLoop() throws Exception {
        Vertx vertx = Vertx.vertx();
        try {
            Promise<Throwable> refused = Promise.promise();
            vertx.runOnContext(v -> {
                try {
                    Checkpoint.save(tmp, model(1), null, null, null);
                    refused.complete(null);
                } catch (Throwable t) {
                    refused.complete(t);
                }
            });
            Throwable t = refused.future().await(10, TimeUnit.SECONDS);
            assertTrue(t instanceof IllegalStateException && t.getMessage().contains("Async form"), String.valueOf(t));
            assertFalse(Checkpoint.exists(tmp), "nothing was written");
        } finally {
            vertx.close().await(10, TimeUnit.SECONDS);
        }
    }

    @Test
    void rankZeroWriteFailureFailsEveryRank() throws IOException {
        Path file = tmp.resolve("occupied");
        Files.writeString(file, "a file where the directory should be");
        Map<Integer, String> messages = new ConcurrentHashMap<>();
        Distributed.spawn(2, pg -> {
            IOException e = assertThrows(IOException.class,
                    () -> Checkpoint.save(file, model(1), null, null, pg));
            messages.put(pg.rank(), String.valueOf(e.getMessage()));
            pg.barrier().await(20, TimeUnit.SECONDS); // the group still works afterwards
        });
        assertTrue(messages.get(1).contains("rank 0 could not write the checkpoint"), messages.get(1));
        assertTrue(messages.get(1).contains("occupied"), messages.get(1));
    }

    @Test
    void aLoadFailureOnOneRankFailsEveryRank() {
        Path dir = tmp.resolve("mixed");
        Map<Integer, Throwable> errors = new ConcurrentHashMap<>();
        Distributed.spawn(2, pg -> {
            Checkpoint.save(dir, model(1), null, null, pg);
            Module target = pg.rank() == 1 ? new Sequential(new Linear(4, 3, true, new Generator(1))) : model(2);
            errors.put(pg.rank(), assertThrows(Exception.class, () -> Checkpoint.load(dir, target, null, pg)));
        });
        assertTrue(errors.get(1) instanceof IllegalArgumentException, errors.get(1).toString());
        assertTrue(errors.get(0) instanceof IOException, errors.get(0).toString());
        assertTrue(errors.get(0).getMessage().contains("rank 1: IllegalArgumentException"),
                errors.get(0).getMessage());
    }
}
