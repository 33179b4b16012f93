package io.tensorbus.c10d;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class JobSecretTest {
    @TempDir
    Path dir;

    @Test
    void theEnvironmentsSecretComesFirstThenItsFileThenNone() throws Exception {
        Path file = Files.writeString(dir.resolve("secret"), "  from the file, 16+ bytes\n");
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
        assertTrue(JobSecret.fromEnvironment(Map.of(JobSecret.ENV, "from the variable itself",
                JobSecret.FILE_ENV, file.toString())).toString().contains(JobSecret.ENV));
        JobSecret fromFile = JobSecret.fromEnvironment(Map.of(JobSecret.FILE_ENV, file.toString()));
        assertTrue(fromFile.isPresent() && fromFile.toString().contains(file.toString()), fromFile.toString());
        assertFalse(JobSecret.fromEnvironment(Map.of()).isPresent());
    }

    @Test
    void aSecretShorterThanSixteenBytesIsRefusedSayingHowToMakeOne() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> JobSecret.fromEnvironment(Map.of(JobSecret.ENV, "too short")));
        assertTrue(e.getMessage().contains("holds 9 bytes") && e.getMessage().contains("./tensorbus secret"),
                e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> JobSecret.of(new byte[15]));
    }

    @Test
    void aSecretFileOthersMayReadIsRefusedAsSshWould() throws Exception {
        Path file = Files.writeString(dir.resolve("open"), "a secret of enough bytes");
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-r--r--"));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> JobSecret.fromEnvironment(Map.of(JobSecret.FILE_ENV, file.toString())));
        assertTrue(e.getMessage().contains("chmod 600 " + file), e.getMessage());
        IllegalArgumentException missing = assertThrows(IllegalArgumentException.class,
                () -> JobSecret.fromEnvironment(Map.of(JobSecret.FILE_ENV, dir.resolve("none").toString())));
        assertTrue(missing.getMessage().contains("cannot read the secret file"), missing.getMessage());
    }

    @Test
    void theKeyNeverShowsInText() {
        String text = JobSecret.newSecretText();
        assertTrue(text.matches("[0-9a-f]{64}"), text);
        assertNotEquals(text, JobSecret.newSecretText());
        JobSecret s = JobSecret.fromEnvironment(Map.of(JobSecret.ENV, text));
        assertFalse(s.toString().contains(text), s.toString());
        assertFalse(JobSecret.random().toString().matches(".*[0-9a-f]{16}.*"));
    }

    @Test
    void withoutASecretOnlyLoopbackAddressesMayBeBound() {
        JobSecret.none().checkBind("127.0.0.1", "the test server");
        JobSecret.none().checkBind("localhost", "the test server");
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> JobSecret.none().checkBind("0.0.0.0", "the test server"));
        assertTrue(e.getMessage().startsWith("the test server cannot listen on 0.0.0.0 without a job secret")
                && e.getMessage().contains(JobSecret.FILE_ENV), e.getMessage());
        JobSecret.random().checkBind("0.0.0.0", "the test server");
        assertEquals(JobSecret.none(), JobSecret.fromEnvironment(Map.of(JobSecret.ENV, " ")));
    }
}
