package io.tensorbus.workloads.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class AotCacheTest {
    private static final LaunchOptions TWO = LaunchOptions.parse(List.of("--nproc-per-node", "2", "a.B"));
    private static final LaunchTarget OWN = new LaunchTarget("a.B", "", List.of(), List.of());

    @TempDir
    Path dir;

    private String cacheFile() throws IOException {
        return Files.writeString(dir.resolve("tensorbus.aot"), "cache").toString();
    }

    @Test
    void childrenOnTheLaunchersClassPathUseTheCache() throws IOException {
        String cache = cacheFile();
        List<String> cmd = LaunchedRank.command(TWO, OWN, null, 2, Map.of(AotCache.CACHE_ENV, cache));
        assertTrue(cmd.contains("-XX:AOTCache=" + cache), cmd.toString());
        assertTrue(cmd.indexOf("-XX:AOTCache=" + cache) < cmd.indexOf("-cp"), cmd.toString());
    }

    @Test
    void childrenOnAUsersClassPathGetNoCacheAsTheJdkWouldRefuseIt() throws IOException {
        LaunchTarget user = new LaunchTarget("a.B", "/app/classes", List.of(), List.of());
        List<String> cmd = LaunchedRank.command(TWO, user, null, 2, Map.of(AotCache.CACHE_ENV, cacheFile()));
        assertTrue(cmd.stream().noneMatch(f -> f.startsWith("-XX:AOT")), cmd.toString());
    }

    @Test
    void aMissingCacheFileIsLeftOut() {
        Map<String, String> env = Map.of(AotCache.CACHE_ENV, dir.resolve("absent.aot").toString());
        assertEquals(List.of(), AotCache.flags(env, true, List.of()));
    }

    @Test
    void theUsersOwnCacheOrSharingOptionWins() throws IOException {
        Map<String, String> env = Map.of(AotCache.CACHE_ENV, cacheFile());
        for (String opt : List.of("-XX:AOTCache=/mine.aot", "-Xshare:off", "-XX:SharedArchiveFile=/a.jsa")) {
            assertEquals(List.of(), AotCache.flags(env, true, List.of(opt)), opt);
        }
    }

    @Test
    void onlyRankZeroWritesANewCache() throws IOException {
        Map<String, String> env = Map.of(AotCache.OUTPUT_ENV, "/tmp/new.aot", AotCache.CACHE_ENV, cacheFile());
        List<String> cmd = LaunchedRank.command(TWO, OWN, null, 2, env);
        assertTrue(cmd.contains("-XX:AOTCacheOutput=/tmp/new.aot"), cmd.toString());
        assertTrue(cmd.stream().noneMatch(f -> f.startsWith("-XX:AOTCache=")), "one of output or cache: " + cmd);
        assertEquals(cmd, AotCache.forRank(cmd, 0));
        List<String> rank1 = AotCache.forRank(cmd, 1);
        assertFalse(rank1.contains("-XX:AOTCacheOutput=/tmp/new.aot"), rank1.toString());
        assertEquals(cmd.size() - 1, rank1.size());
    }
}
