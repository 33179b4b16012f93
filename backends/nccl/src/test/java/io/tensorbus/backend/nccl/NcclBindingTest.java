package io.tensorbus.backend.nccl;

import io.tensorbus.DType;
import io.tensorbus.Device;
import io.tensorbus.c10d.ReduceOp;
import io.tensorbus.spi.BackendOptions;
import io.tensorbus.spi.BackendProvider;
import io.tensorbus.spi.DeviceRuntimeProvider;
import io.tensorbus.spi.contract.MemoryStore;
import io.vertx.core.Vertx;
import java.io.IOException;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

/**
 * The FFM binding against {@code nccl.h}: the enum values (transcribed from NCCL 2.28's header, and checked
 * against an installed {@code nccl.h} where one exists), the by-value {@code ncclUniqueId} and the downcalls'
 * signatures; the search for {@code libnccl.so.2}; and the provider's answer on a machine without NCCL or CUDA.
 */
class NcclBindingTest {
    /** {@code nccl.h}'s values of the names the backend uses. */
    private static final Map<String, Integer> HEADER = new LinkedHashMap<>();

    static {
        HEADER.put("ncclSuccess", 0);
        HEADER.put("ncclUnhandledCudaError", 1);
        HEADER.put("ncclSystemError", 2);
        HEADER.put("ncclInternalError", 3);
        HEADER.put("ncclInvalidArgument", 4);
        HEADER.put("ncclInvalidUsage", 5);
        HEADER.put("ncclRemoteError", 6);
        HEADER.put("ncclInProgress", 7);
        HEADER.put("ncclInt8", 0);
        HEADER.put("ncclUint8", 1);
        HEADER.put("ncclInt32", 2);
        HEADER.put("ncclUint32", 3);
        HEADER.put("ncclInt64", 4);
        HEADER.put("ncclUint64", 5);
        HEADER.put("ncclFloat16", 6);
        HEADER.put("ncclFloat32", 7);
        HEADER.put("ncclFloat64", 8);
        HEADER.put("ncclBfloat16", 9);
        HEADER.put("ncclSum", 0);
        HEADER.put("ncclProd", 1);
        HEADER.put("ncclMax", 2);
        HEADER.put("ncclMin", 3);
        HEADER.put("ncclAvg", 4);
    }

    private static Map<String, Integer> ours() {
        Map<String, Integer> m = new LinkedHashMap<>();
        m.put("ncclSuccess", NcclConstants.SUCCESS);
        m.put("ncclUnhandledCudaError", NcclConstants.UNHANDLED_CUDA_ERROR);
        m.put("ncclSystemError", NcclConstants.SYSTEM_ERROR);
        m.put("ncclInternalError", NcclConstants.INTERNAL_ERROR);
        m.put("ncclInvalidArgument", NcclConstants.INVALID_ARGUMENT);
        m.put("ncclInvalidUsage", NcclConstants.INVALID_USAGE);
        m.put("ncclRemoteError", NcclConstants.REMOTE_ERROR);
        m.put("ncclInProgress", NcclConstants.IN_PROGRESS);
        m.put("ncclInt8", NcclConstants.INT8);
        m.put("ncclUint8", NcclConstants.UINT8);
        m.put("ncclInt32", NcclConstants.INT32);
        m.put("ncclUint32", NcclConstants.UINT32);
        m.put("ncclInt64", NcclConstants.INT64);
        m.put("ncclUint64", NcclConstants.UINT64);
        m.put("ncclFloat16", NcclConstants.FLOAT16);
        m.put("ncclFloat32", NcclConstants.FLOAT32);
        m.put("ncclFloat64", NcclConstants.FLOAT64);
        m.put("ncclBfloat16", NcclConstants.BFLOAT16);
        m.put("ncclSum", NcclConstants.SUM);
        m.put("ncclProd", NcclConstants.PROD);
        m.put("ncclMax", NcclConstants.MAX);
        m.put("ncclMin", NcclConstants.MIN);
        m.put("ncclAvg", NcclConstants.AVG);
        return m;
    }

    @Test
    void theConstantsAreNcclHeadersValues() {
        assertEquals(HEADER, ours());
        assertEquals(NcclConstants.FLOAT32, NcclConstants.dataType(DType.FLOAT32));
        assertEquals(NcclConstants.BFLOAT16, NcclConstants.dataType(DType.BFLOAT16));
        assertEquals(NcclConstants.UINT8, NcclConstants.dataType(DType.BOOL));
        assertEquals(NcclConstants.AVG, NcclConstants.redOp(ReduceOp.AVG, DType.FLOAT16));
        assertThrows(IllegalArgumentException.class, () -> NcclConstants.redOp(ReduceOp.BAND, DType.INT64));
        assertEquals("ncclRemoteError", NcclConstants.resultName(6));
    }

    @Test
    void anInstalledNcclHeaderAgreesWhereThereIsOne() throws IOException {
        for (Path h : List.of(Path.of("/usr/include/nccl.h"), Path.of("/usr/local/cuda/include/nccl.h"))) {
            if (Files.isRegularFile(h)) {
                String text = Files.readString(h);
                for (Map.Entry<String, Integer> e : HEADER.entrySet()) {
                    Matcher m = Pattern.compile("\\b" + e.getKey() + "\\s*=\\s*(\\d+)").matcher(text);
                    assertTrue(m.find(), e.getKey() + " not in " + h);
                    assertEquals(e.getValue(), Integer.parseInt(m.group(1)), e.getKey() + " in " + h);
                }
                Matcher id = Pattern.compile("#define NCCL_UNIQUE_ID_BYTES (\\d+)").matcher(text);
                assertTrue(id.find());
                assertEquals(NcclConstants.UNIQUE_ID_BYTES, Integer.parseInt(id.group(1)));
            }
        }
    }

    @Test
    void theUniqueIdIsA128ByteStructPassedByValueAndTheDowncallsMatchTheHeader() {
        assertEquals(128, NcclLibrary.UNIQUE_ID.byteSize());
        assertEquals(1, NcclLibrary.UNIQUE_ID.byteAlignment(), "char[128]: byte aligned");
        // ncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank)
        assertEquals(List.of(ValueLayout.ADDRESS, ValueLayout.JAVA_INT, NcclLibrary.UNIQUE_ID, ValueLayout.JAVA_INT),
                NcclLibrary.COMM_INIT_RANK.argumentLayouts());
        // ncclAllReduce(const void*, void*, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t, cudaStream_t)
        assertEquals(List.<MemoryLayout>of(ValueLayout.ADDRESS, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG,
                ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.ADDRESS),
                NcclLibrary.ALL_REDUCE.argumentLayouts());
        // ncclReduce(..., ncclRedOp_t op, int root, ncclComm_t, cudaStream_t)
        assertEquals(8, NcclLibrary.REDUCE.argumentLayouts().size());
        // ncclSend(const void*, size_t, ncclDataType_t, int peer, ncclComm_t, cudaStream_t)
        assertEquals(List.<MemoryLayout>of(ValueLayout.ADDRESS, ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT,
                ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.ADDRESS),
                NcclLibrary.SEND_RECV.argumentLayouts());
        for (var d : List.of(NcclLibrary.GET_VERSION, NcclLibrary.COMM_INIT_RANK, NcclLibrary.ALL_REDUCE,
                NcclLibrary.REDUCE, NcclLibrary.ALL_GATHER, NcclLibrary.SEND_RECV, NcclLibrary.GROUP)) {
            assertEquals(Optional.of(ValueLayout.JAVA_INT), d.returnLayout(), "ncclResult_t is an int enum");
        }
    }

    @Test
    void theLibraryIsFoundWhereItIsNamedOrInAPipWheel(@TempDir Path dir) throws IOException {
        LibraryPath nccl = LibraryPath.NCCL;
        Path wheel = dir.resolve("venv/lib/python3.11/site-packages/nvidia/nccl/lib");
        Files.createDirectories(wheel);
        Files.writeString(wheel.resolve(nccl.file()), "not really a library");
        LibraryPath.Result r = nccl.find(null, Map.of("VIRTUAL_ENV", dir.resolve("venv").toString()),
                dir.resolve("home"));
        assertEquals(Optional.of(wheel.resolve(nccl.file())), r.path(), r.searched().toString());
        LibraryPath.Result named = nccl.find(dir.resolve("missing.so").toString(), Map.of(), dir);
        assertFalse(named.path().isPresent());
        assertTrue(named.searched().getFirst().contains("missing.so"), named.searched().toString());
        assertTrue(nccl.missing(named).contains("-Dtensorbus.nccl.library"), nccl.missing(named));
        LibraryPath.Result env = nccl.find(null, Map.of(nccl.env(), wheel.resolve(nccl.file()).toString()), dir);
        assertTrue(env.path().isPresent());
        // NVRTC's wheel is another folder, and the driver has none.
        assertFalse(LibraryPath.NVRTC.find(null, Map.of("VIRTUAL_ENV", dir.resolve("venv").toString()),
                dir.resolve("home")).searched().contains(wheel.toString()));
        assertTrue(LibraryPath.DRIVER.find(null, Map.of("VIRTUAL_ENV", dir.resolve("venv").toString()),
                dir.resolve("home")).searched().stream().noneMatch(s -> s.contains("site-packages")));
        // A file that is not a shared library is refused with the reason, not a crash.
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new NcclLibrary(wheel.resolve(nccl.file())));
        assertTrue(e.getMessage() != null, String.valueOf(e));
    }

    @Test
    void withoutCudaTheBackendIsListedAsUnavailableSayingWhy() {
        BackendProvider p = BackendProvider.all().stream().filter(b -> b.name().equals("nccl")).findFirst()
                .orElseThrow(() -> new AssertionError("the nccl provider is not found by ServiceLoader"));
        assertFalse(p.isAvailable());
        String why = p.unavailabilityCause().getMessage();
        assertTrue(why.contains("CUDA"), why);
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> BackendProvider.named("nccl"));
        assertTrue(e.getMessage().contains("not available on this machine"), e.getMessage());
    }

    @Test
    void withoutADriverTheCudaRuntimeIsListedAsUnavailableNamingTheDriverLibrary() {
        assumeFalse(new CudaRuntimeProvider().isAvailable(), "this machine has CUDA");
        DeviceRuntimeProvider cuda = DeviceRuntimeProvider.all().stream().filter(p -> p.type().equals("cuda"))
                .findFirst().orElseThrow(() -> new AssertionError("the cuda runtime is not found by ServiceLoader"));
        assertFalse(cuda.isAvailable());
        String why = cuda.unavailabilityCause().getMessage();
        assertTrue(why.contains("libcuda.so.1") && why.contains("NVIDIA driver"), why);
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> DeviceRuntimeProvider.of(new Device("cuda", 0)));
        assertTrue(e.getMessage().contains("libcuda.so.1"), e.getMessage());
    }

    @Test
    void eachRankPicksItsDeviceByPropertyLocalRankOrRank() {
        Vertx vertx = Vertx.vertx();
        try {
            picksDevices(vertx);
        } finally {
            vertx.close();
        }
    }

    private static void picksDevices(Vertx vertx) {
        BackendOptions rank3 = options(vertx, 3, Map.of());
        assertEquals(3, NcclBackendProvider.deviceIndex(rank3, Map.of(), 8));
        assertEquals(1, NcclBackendProvider.deviceIndex(rank3, Map.of(), 2), "the rank, modulo the devices");
        assertEquals(0, NcclBackendProvider.deviceIndex(rank3, Map.of("LOCAL_RANK", "4"), 2), "LOCAL_RANK first");
        BackendOptions named = options(vertx, 3, Map.of(NcclBackendProvider.DEVICE_PROPERTY, "1"));
        assertEquals(1, NcclBackendProvider.deviceIndex(named, Map.of("LOCAL_RANK", "0"), 2), "the property first");
        IllegalArgumentException tooHigh = assertThrows(IllegalArgumentException.class, () -> NcclBackendProvider
                .deviceIndex(options(vertx, 0, Map.of(NcclBackendProvider.DEVICE_PROPERTY, "5")), Map.of(), 2));
        assertTrue(tooHigh.getMessage().contains("nccl.device=5") && tooHigh.getMessage().contains("cuda:1"),
                tooHigh.getMessage());
        IllegalArgumentException bad = assertThrows(IllegalArgumentException.class,
                () -> NcclBackendProvider.deviceIndex(rank3, Map.of("LOCAL_RANK", "two"), 2));
        assertTrue(bad.getMessage().contains("LOCAL_RANK='two'"), bad.getMessage());
    }

    private static BackendOptions options(Vertx vertx, int rank, Map<String, String> properties) {
        return new BackendOptions(rank, 4, new MemoryStore(Duration.ofSeconds(5)), Duration.ofSeconds(5), "g", null,
                vertx, properties);
    }
}
