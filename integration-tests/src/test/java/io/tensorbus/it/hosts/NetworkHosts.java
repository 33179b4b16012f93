package io.tensorbus.it.hosts;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Hosts for tests that cross a network: N Linux network namespaces, each with its own address in the private test
 * subnet {@value #SUBNET}.0/24 on an {@code eth0} cabled (a veth pair) to one bridge, the switch, which lives in a
 * namespace of its own. Nothing in them reaches the machine's own network or the outside: only the hosts'
 * addresses exist there. A process started on a host ({@link #start}) also gets a {@code /dev/shm} of that host
 * alone, so that two hosts share no memory, as two machines would not.
 *
 * <p>Needs root and iproute2's {@code ip}; {@link #unavailableReason()} says why not when they are missing. Close
 * it in a try-with-resources: every process in the hosts is killed and every namespace removed, also when a test
 * fails; a JVM that dies first leaves namespaces named after its pid, which the next fixture removes.
 */
public final class NetworkHosts implements AutoCloseable {
    /** The first three octets of the hosts' addresses: host K is {@value #SUBNET}.(K + 1). */
    public static final String SUBNET = "10.231.7";

    private static final String PREFIX = "tbit";
    /** Mounts a host's own {@code /dev/shm}. */
    private static final String SHM = "mount -t tmpfs -o size=1g,mode=1777 tensorbus-shm /dev/shm";
    private static final AtomicInteger FIXTURES = new AtomicInteger();
    private static volatile String unavailable;

    private final String name;
    private final int count;
    private final List<Process> started = new ArrayList<>();
    private final Thread cleanup = new Thread(this::removeAll, "network-hosts-cleanup");

    private NetworkHosts(String name, int count) {
        this.name = name;
        this.count = count;
    }

    /**
     * Why hosts cannot be made here (not root, no {@code ip}, namespaces refused), or null when they can. Checked
     * once per JVM by making and removing a namespace.
     */
    public static synchronized String unavailableReason() {
        if (unavailable == null) {
            unavailable = probe();
        }
        return unavailable.isEmpty() ? null : unavailable;
    }

    private static String probe() {
        try {
            String uid = Files.readAllLines(Path.of("/proc/self/status")).stream()
                    .filter(l -> l.startsWith("Uid:")).findFirst().orElse("Uid: -1").split("\\s+")[1];
            if (!uid.equals("0")) {
                return "network namespaces need root (this JVM runs as uid " + uid + ")";
            }
        } catch (IOException e) {
            return "cannot tell this process's user: " + e.getMessage();
        }
        String probe = PREFIX + ProcessHandle.current().pid() + "probe";
        try {
            run("ip", "netns", "add", probe);
        } catch (IOException e) {
            return "cannot make a network namespace with `ip netns add` (is iproute2 installed?): " + e.getMessage();
        }
        try {
            run("ip", "netns", "exec", probe, "sh", "-c", SHM + " && true");
            return "";
        } catch (IOException e) {
            return "cannot give a namespace host its own /dev/shm (mount -t tmpfs): " + e.getMessage();
        } finally {
            removeNamespace(probe);
        }
    }

    /**
     * Makes {@code count} hosts on one switch.
     *
     * @throws IOException when an {@code ip} command fails (what was removed by then is removed)
     */
    public static NetworkHosts create(int count) throws IOException {
        String reason = unavailableReason();
        if (reason != null) {
            throw new IOException(reason);
        }
        removeOrphans();
        NetworkHosts hosts = new NetworkHosts(PREFIX + ProcessHandle.current().pid() + "x"
                + FIXTURES.incrementAndGet(), count);
        Runtime.getRuntime().addShutdownHook(hosts.cleanup);
        try {
            hosts.wire();
            return hosts;
        } catch (IOException | RuntimeException e) {
            hosts.close();
            throw e;
        }
    }

    private void wire() throws IOException {
        String sw = switchNamespace();
        run("ip", "netns", "add", sw);
        run("ip", "-n", sw, "link", "add", "br0", "type", "bridge");
        run("ip", "-n", sw, "link", "set", "br0", "up");
        for (int k = 0; k < count; k++) {
            String ns = namespace(k);
            run("ip", "netns", "add", ns);
            run("ip", "link", "add", "eth0", "netns", ns, "type", "veth", "peer", "name", port(k), "netns", sw);
            run("ip", "-n", sw, "link", "set", port(k), "master", "br0");
            run("ip", "-n", sw, "link", "set", port(k), "up");
            run("ip", "-n", ns, "addr", "add", address(k) + "/24", "dev", "eth0");
            run("ip", "-n", ns, "link", "set", "eth0", "up");
            run("ip", "-n", ns, "link", "set", "lo", "up");
        }
    }

    /** The address of host {@code k}. */
    public String address(int k) {
        return SUBNET + "." + (k + 1);
    }

    /** The number of hosts. */
    public int count() {
        return count;
    }

    /**
     * Starts {@code command} on host {@code k} with {@code env} added to this JVM's environment, its own
     * {@code /dev/shm}, stdout and stderr merged.
     */
    public Process start(int k, List<String> command, Map<String, String> env) throws IOException {
        List<String> cmd = new ArrayList<>(List.of("ip", "netns", "exec", namespace(k), "sh", "-c",
                // `ip netns exec` gives the command a mount namespace of its own: the tmpfs stays this host's.
                SHM + " && exec \"$@\"", "sh"));
        cmd.addAll(command);
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        pb.environment().putAll(env);
        Process p = pb.start();
        p.getOutputStream().close();
        synchronized (started) {
            started.add(p);
        }
        return p;
    }

    /** Pulls host {@code k}'s cable at the switch: its packets are dropped from now on, without FIN or RST. */
    public void cut(int k) throws IOException {
        run("ip", "-n", switchNamespace(), "link", "set", port(k), "down");
    }

    /** Plugs host {@code k}'s cable back in. */
    public void reconnect(int k) throws IOException {
        run("ip", "-n", switchNamespace(), "link", "set", port(k), "up");
    }

    /** The processes running in host {@code k}'s namespace. */
    public List<Long> pids(int k) throws IOException {
        String out = run("ip", "netns", "pids", namespace(k));
        List<Long> pids = new ArrayList<>();
        for (String line : out.split("\n")) {
            if (!line.isBlank()) {
                pids.add(Long.parseLong(line.trim()));
            }
        }
        return pids;
    }

    /** Kills every process of host {@code k} (SIGKILL), as when the machine loses power. */
    public void killAll(int k) throws IOException {
        for (long pid : pids(k)) {
            ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly);
        }
    }

    /** Kills whatever still runs in the hosts and removes every namespace. */
    @Override
    public void close() {
        removeAll();
        try {
            Runtime.getRuntime().removeShutdownHook(cleanup);
        } catch (IllegalStateException e) {
            // Shutting down: the hook is running.
        }
    }

    private synchronized void removeAll() {
        synchronized (started) {
            for (Process p : started) {
                p.descendants().forEach(ProcessHandle::destroyForcibly);
                p.destroyForcibly();
            }
        }
        for (int k = 0; k < count; k++) {
            removeNamespace(namespace(k));
        }
        removeNamespace(switchNamespace());
    }

    /** Removes the namespaces that a JVM which no longer runs left behind. */
    private static void removeOrphans() {
        try {
            for (String line : run("ip", "netns", "list").split("\n")) {
                String ns = line.trim().split(" ")[0];
                if (!ns.startsWith(PREFIX)) {
                    continue;
                }
                String digits = ns.substring(PREFIX.length()).replaceAll("\\D.*", "");
                if (!digits.isEmpty() && ProcessHandle.of(Long.parseLong(digits)).isEmpty()) {
                    removeNamespace(ns);
                }
            }
        } catch (IOException | RuntimeException e) {
            // Orphans only take names this fixture does not use.
        }
    }

    private static void removeNamespace(String ns) {
        try {
            for (String line : run("ip", "netns", "pids", ns).split("\n")) {
                if (!line.isBlank()) {
                    ProcessHandle.of(Long.parseLong(line.trim())).ifPresent(ProcessHandle::destroyForcibly);
                }
            }
            run("ip", "netns", "del", ns);
        } catch (IOException | RuntimeException e) {
            // Already gone.
        }
    }

    private String namespace(int k) {
        return name + "h" + k;
    }

    private String switchNamespace() {
        return name + "sw";
    }

    private static String port(int k) {
        return "p" + k;
    }

    /** Runs a command to its end (20 s at most); its output, or an IOException with it when it fails. */
    private static String run(String... command) throws IOException {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        try {
            if (!p.waitFor(20, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IOException(String.join(" ", command) + " did not end within 20 s");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            p.destroyForcibly();
            throw new IOException(String.join(" ", command) + " interrupted", e);
        }
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (p.exitValue() != 0) {
            throw new IOException(String.join(" ", command) + " exited with " + p.exitValue() + ": " + out.strip());
        }
        return out;
    }
}
