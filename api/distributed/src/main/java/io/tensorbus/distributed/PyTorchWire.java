package io.tensorbus.distributed;

import java.util.Objects;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Which PyTorch release's wire a JVM rank speaks in a job with PyTorch processes: the commands and handshake of its
 * {@code TCPStore}, how gloo's TCP transport rendezvouses, and the keys {@code init_process_group} writes. PyTorch
 * changed all three in the 2.x line, and the processes of one job must agree; {@link #forVersion} picks the wire of a
 * {@code torch.__version__}. PyTorch 2.0 and 2.1 are not served: 2.0 joined 1.13's store and gloo with 2.x's
 * per-device key prefix, and 2.1's TCPStore sat between the two wires (key watches gone and the later commands
 * renumbered, the validation landing about its branch cut); neither mix could be confirmed from the sources.
 */
public enum PyTorchWire {
    /**
     * PyTorch 1.13: TCPStore commands numbered from {@code SET=0} with no handshake; gloo (as Debian's
     * {@code libgloo0} 5b14351) listens once per pair and publishes one address per peer; the default group's gloo
     * keys sit under {@code default_pg/0/0/}, followed by the store-based barrier and rank 0's sequence number.
     */
    V1_13,
    /**
     * PyTorch 2.2 and later: every TCPStore connection opens with {@code VALIDATE} and the magic {@code 0x3C85F7CE},
     * commands numbered from {@code SET=1} (and {@code PING=13}); gloo (from 6d8b511) listens once per group,
     * publishes one record per rank (host name, listening address, a sequence number per peer), and the dialing side
     * names its pair by writing that sequence number first; the default group's gloo keys sit under
     * {@code default_pg/0//cpu//0/}, with no store-based barrier. Implemented from PyTorch's and gloo's sources and
     * checked against byte transcripts made from them, and run against Debian's PyTorch 2.6 (which links gloo 5354032)
     * with {@code tools/pytorch2}.
     */
    V2_2;

    private static final Pattern VERSION = Pattern.compile("(\\d+)\\.(\\d+)(?:[.+a-z].*)?");

    /**
     * The wire of PyTorch {@code version}, as {@code torch.__version__} prints it ({@code 1.13.1}, {@code 2.4.0+cpu}).
     *
     * @throws IllegalArgumentException when {@code version} is not {@code major.minor[...]}, is older than 1.13, or
     *     is 2.0 or 2.1
     */
    public static PyTorchWire forVersion(String version) {
        Objects.requireNonNull(version, "version");
        Matcher m = VERSION.matcher(version.trim());
        if (!m.matches()) {
            throw new IllegalArgumentException("a PyTorch version is major.minor[.patch], as torch.__version__ "
                    + "prints it (1.13.1, 2.4.0+cpu), got '" + version + "'");
        }
        int major = Integer.parseInt(m.group(1));
        int minor = Integer.parseInt(m.group(2));
        if (major < 1 || major == 1 && minor < 13) {
            throw new IllegalArgumentException("PyTorch " + version + " is older than 1.13, the oldest wire served");
        }
        if (major == 2 && minor <= 1) {
            throw new IllegalArgumentException("PyTorch " + version + " is not served: 2.0 mixed 1.13's store and gloo"
                    + " with 2.x's key prefixes, and 2.1's TCPStore sat between the two wires, neither confirmed from"
                    + " the sources; 1.13 (V1_13) and 2.2 or later (V2_2) are served");
        }
        return major == 1 ? V1_13 : V2_2;
    }
}
