package io.tensorbus.backend.nccl;

import io.tensorbus.DType;
import io.tensorbus.c10d.ReduceOp;
import io.tensorbus.spi.BackendProvider;
import java.io.IOException;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
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
                ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.ADDRESS), NcclLibrary.SEND_RECV.argumentLayouts());
        for (var d : List.of(NcclLibrary.GET_VERSION, NcclLibrary.COMM_INIT_RANK, NcclLibrary.ALL_REDUCE,
                NcclLibrary.REDUCE, NcclLibrary.ALL_GATHER, NcclLibrary.SEND_RECV, NcclLibrary.GROUP)) {
            assertEquals(Optional.of(ValueLayout.JAVA_INT), d.returnLayout(), "ncclResult_t is an int enum");
        }
    }

    @Test
    void theLibraryIsFoundWhereItIsNamedOrInAPipWheel(@TempDir Path dir) throws IOException {
        Path wheel = dir.resolve("venv/lib/python3.11/site-packages/nvidia/nccl/lib");
        Files.createDirectories(wheel);
        Files.writeString(wheel.resolve(NcclLibraryPath.FILE), "not really a library");
        NcclLibraryPath.Result r = NcclLibraryPath.find(null, Map.of("VIRTUAL_ENV", dir.resolve("venv").toString()),
                dir.resolve("home"));
        assertEquals(Optional.of(wheel.resolve(NcclLibraryPath.FILE)), r.path(), r.searched().toString());
        NcclLibraryPath.Result named = NcclLibraryPath.find(dir.resolve("missing.so").toString(), Map.of(), dir);
        assertFalse(named.path().isPresent());
        assertTrue(named.searched().getFirst().contains("missing.so"), named.searched().toString());
        NcclLibraryPath.Result env = NcclLibraryPath.find(null, Map.of(NcclLibraryPath.ENV,
                wheel.resolve(NcclLibraryPath.FILE).toString()), dir);
        assertTrue(env.path().isPresent());
        // A file that is not a shared library is refused with the reason, not a crash.
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new NcclLibrary(wheel.resolve(NcclLibraryPath.FILE)));
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
}
