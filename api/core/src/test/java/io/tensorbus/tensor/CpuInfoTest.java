package io.tensorbus.tensor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import jdk.incubator.vector.FloatVector;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CpuInfoTest {
    @TempDir
    Path dir;

    private Path caches(String... levelTypeSize) throws IOException {
        Path root = Files.createDirectories(dir.resolve("cache"));
        for (int i = 0; i < levelTypeSize.length; i++) {
            String[] f = levelTypeSize[i].split(" ");
            Path index = Files.createDirectories(root.resolve("index" + i));
            Files.writeString(index.resolve("level"), f[0] + "\n");
            Files.writeString(index.resolve("type"), f[1] + "\n");
            Files.writeString(index.resolve("size"), f[2] + "\n");
        }
        return root;
    }

    @Test
    void readsAnIntelXeonsModelCachesAndFeatures() throws IOException {
        Path cpuinfo = Files.writeString(dir.resolve("cpuinfo"), """
                processor\t: 0
                vendor_id\t: GenuineIntel
                cpu family\t: 6
                model\t\t: 143
                model name\t: Intel(R) Xeon(R) Platinum 8488C
                flags\t\t: fpu sse2 fma avx2 avx512f avx512bw avx512vl avx512_bf16 amx_bf16 amx_tile

                processor\t: 1
                vendor_id\t: SomethingElse
                """);
        CpuInfo cpu = CpuInfo.probe(cpuinfo, caches("1 Data 48K", "1 Instruction 32K", "2 Unified 2048K",
                "3 Unified 105M"), 2, 512);
        assertEquals("GenuineIntel", cpu.vendor());
        assertEquals("Intel(R) Xeon(R) Platinum 8488C", cpu.model());
        assertEquals(6, cpu.family());
        assertEquals(143, cpu.modelNumber());
        assertEquals(48 << 10, cpu.l1dBytes());
        assertEquals(2 << 20, cpu.l2Bytes());
        assertEquals(105L << 20, cpu.l3Bytes());
        assertEquals(Set.of("fma", "avx2", "avx512f", "avx512bw", "avx512vl", "avx512_bf16", "amx_bf16", "amx_tile"),
                cpu.features());
        assertTrue(cpu.has("amx_tile"));
        assertFalse(cpu.has("sse2"), "only the features the kernels care about are kept");
        assertEquals("AVX512", cpu.capability());
        assertEquals("Intel(R) Xeon(R) Platinum 8488C (GenuineIntel family 6 model 143), 2 core(s), L1d 48 KiB,"
                + " L2 2 MiB per core, L3 105 MiB, AVX512: fma avx2 avx512f avx512bw avx512vl avx512_bf16 amx_tile"
                + " amx_bf16", cpu.describe());
    }

    @Test
    void unreadableFilesLeaveTheFieldsUnknown() {
        CpuInfo cpu = CpuInfo.probe(dir.resolve("absent"), dir.resolve("absent-too"), 4, 256);
        assertEquals("unknown", cpu.vendor());
        assertEquals(0, cpu.l2Bytes());
        assertEquals(Set.of(), cpu.features());
        assertEquals("AVX2", cpu.capability());
        assertTrue(cpu.describe().contains("L2 unknown per core"), cpu.describe());
    }

    @Test
    void sysfsCacheSizesParse() {
        assertEquals(32 << 10, CpuInfo.parseSize("32K"));
        assertEquals(2 << 20, CpuInfo.parseSize("2M"));
        assertEquals(512, CpuInfo.parseSize("512"));
        assertEquals(0, CpuInfo.parseSize("lots"));
        assertEquals(0, CpuInfo.parseSize(""));
    }

    @Test
    void thisMachinesCpuHasANameAndTheVectorWidthTheKernelsUse() {
        CpuInfo cpu = CpuInfo.current();
        assertFalse(cpu.model().isBlank());
        assertEquals(FloatVector.SPECIES_PREFERRED.vectorBitSize(), cpu.vectorBits());
        assertEquals(Runtime.getRuntime().availableProcessors(), cpu.cores());
    }
}
