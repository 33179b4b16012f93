package io.tensorbus.c10d;

import java.io.IOException;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.util.EnumSet;
import java.util.HexFormat;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The secret every process of one job shares, and that every connection the job opens (the c10d store, a backend's
 * mesh, RPC) proves through {@code io.tensorbus.spi.support.SecretHandshake} before it reads or writes anything else.
 * {@code tensorbus launch} makes a random one per job and hands it to its ranks in {@value #ENV}; a job across
 * machines takes it from {@value #ENV} or the file named by {@value #FILE_ENV} on every node.
 *
 * <p>A process without a secret ({@link #none()}) is in <em>protected mode</em>, as Redis without a
 * password: its connections prove nothing, so it may listen on loopback addresses only
 * ({@link #checkBind}), and it says so once. There is no built-in key: no secret means no proof.
 * {@link #toString()} never shows the key.
 */
public final class JobSecret {
    /** The environment variable holding the secret itself (at least {@value #MIN_BYTES} bytes of UTF-8). */
    public static final String ENV = "TENSORBUS_SECRET";

    /** The environment variable naming a file that holds the secret (readable by its owner only). */
    public static final String FILE_ENV = "TENSORBUS_SECRET_FILE";

    /** The shortest secret accepted, in bytes. */
    public static final int MIN_BYTES = 16;

    /** How to make and share a secret, for the messages that ask for one. */
    public static final String HOW_TO = "make one with `./tensorbus secret > ~/.tensorbus-secret && chmod 600 "
            + "~/.tensorbus-secret`, copy it to every machine of the job and set " + FILE_ENV
            + "=~/.tensorbus-secret (or put the secret itself in " + ENV + ") for every process";

    private static final JobSecret NONE = new JobSecret(null, "no secret");
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final AtomicBoolean WARNED = new AtomicBoolean();
    private static final Set<PosixFilePermission> OTHERS = EnumSet.of(PosixFilePermission.GROUP_READ,
            PosixFilePermission.GROUP_WRITE, PosixFilePermission.OTHERS_READ, PosixFilePermission.OTHERS_WRITE);

    private final byte[] key;
    private final String source;

    private JobSecret(byte[] key, String source) {
        this.key = key;
        this.source = source;
    }

    /** No secret: connections prove nothing and may use loopback addresses only. */
    public static JobSecret none() {
        return NONE;
    }

    /**
     * The secret {@code key} (copied).
     *
     * @throws IllegalArgumentException when it has fewer than {@value #MIN_BYTES} bytes
     */
    public static JobSecret of(byte[] key) {
        if (key == null || key.length < MIN_BYTES) {
            throw new IllegalArgumentException("a job secret needs at least " + MIN_BYTES + " bytes, got "
                    + (key == null ? "none" : key.length) + "; " + HOW_TO);
        }
        return new JobSecret(key.clone(), "a secret given in code");
    }

    /** A new random secret (32 bytes), for jobs whose processes all get it from this one (threads, tests). */
    public static JobSecret random() {
        byte[] bytes = new byte[32];
        RANDOM.nextBytes(bytes);
        return new JobSecret(bytes, "a random secret");
    }

    /** A new random secret as text (64 hex digits: 32 random bytes), fit for {@value #ENV} or a secret file. */
    public static String newSecretText() {
        byte[] bytes = new byte[32];
        RANDOM.nextBytes(bytes);
        return HexFormat.of().formatHex(bytes);
    }

    /**
     * The secret of {@code env}: {@value #ENV} when set, else the contents of the file {@value #FILE_ENV}
     * names (surrounding white space removed), else {@link #none()}.
     *
     * @throws IllegalArgumentException when the secret is too short, or the file is missing, unreadable,
     *     empty, or readable or writable by anyone but its owner (as ssh and PostgreSQL refuse key files)
     */
    public static JobSecret fromEnvironment(Map<String, String> env) {
        String text = env.get(ENV);
        if (text != null && !text.isBlank()) {
            return fromText(text, ENV);
        }
        String file = env.get(FILE_ENV);
        if (file != null && !file.isBlank()) {
            return fromFile(Path.of(expandHome(file.trim())));
        }
        return NONE;
    }

    private static JobSecret fromText(String text, String source) {
        byte[] key = text.strip().getBytes(StandardCharsets.UTF_8);
        if (key.length < MIN_BYTES) {
            throw new IllegalArgumentException(source + " holds " + key.length + " bytes; a job secret needs at least "
                    + MIN_BYTES + "; " + HOW_TO);
        }
        return new JobSecret(key, source);
    }

    private static JobSecret fromFile(Path file) {
        try {
            Set<PosixFilePermission> permissions = Files.getPosixFilePermissions(file);
            if (permissions.stream().anyMatch(OTHERS::contains)) {
                throw new IllegalArgumentException("the secret file " + file + " (" + FILE_ENV + ") may be read or "
                        + "written by others than its owner; run chmod 600 " + file);
            }
        } catch (UnsupportedOperationException e) {
            // Not a POSIX file system: nothing to check.
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot read the secret file " + file + " (" + FILE_ENV + "): " + e
                    + "; " + HOW_TO, e);
        }
        try {
            return fromText(Files.readString(file, StandardCharsets.UTF_8), "the secret file " + file);
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot read the secret file " + file + " (" + FILE_ENV + "): " + e, e);
        }
    }

    private static String expandHome(String path) {
        return path.equals("~") || path.startsWith("~/") ? System.getProperty("user.home") + path.substring(1) : path;
    }

    /** True unless this is {@link #none()}. */
    public boolean isPresent() {
        return key != null;
    }

    /**
     * Checks that a server of {@code what} (for example "the TcpStore") may listen on {@code host}: any host
     * with a secret; loopback addresses only without one, with a one-time note on standard error.
     *
     * @throws IllegalStateException for a non-loopback host without a secret, saying how to set one
     * @throws IllegalArgumentException when {@code host} cannot be resolved
     */
    public void checkBind(String host, String what) {
        if (isPresent()) {
            return;
        }
        if (!isLoopback(host)) {
            throw new IllegalStateException(what + " cannot listen on " + host + " without a job secret: anyone who "
                    + "can reach that address could join the job or read and write its data; " + HOW_TO
                    + " (tensorbus launch does this for the ranks of a one-machine job by itself)");
        }
        if (WARNED.compareAndSet(false, true)) {
            System.err.println("tensorbus: no job secret (" + ENV + " or " + FILE_ENV + "), so connections are "
                    + "not authenticated and this process listens on loopback addresses only");
        }
    }

    /** True when {@code host} names a loopback address (127.0.0.0/8, ::1, localhost). */
    public static boolean isLoopback(String host) {
        try {
            return InetAddress.getByName(host).isLoopbackAddress();
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException("unknown host '" + host + "'", e);
        }
    }

    /**
     * HMAC-SHA256 under this secret of {@code parts}, each followed by a zero byte (so no two lists of parts
     * give the same input): what a protocol proving the secret sends, as
     * {@code io.tensorbus.spi.support.SecretHandshake} does. Public for such protocols only; call it on a present
     * secret.
     */
    public byte[] mac(byte[]... parts) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(key, "HmacSHA256"));
            for (byte[] part : parts) {
                mac.update(part);
                mac.update((byte) 0);
            }
            return mac.doFinal();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 is not available in this JDK", e);
        }
    }

    /** Where the secret came from, never the key. */
    @Override
    public String toString() {
        return "JobSecret[" + source + "]";
    }
}
