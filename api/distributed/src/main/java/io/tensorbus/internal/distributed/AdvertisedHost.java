package io.tensorbus.internal.distributed;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.DatagramSocket;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;

/**
 * The address a process publishes for its peers to connect to: the tcp backend's mesh, RPC and the Hazelcast
 * member all listen somewhere and tell the others where. On a host whose name maps to a loopback address (Debian's
 * {@code /etc/hosts}), {@link InetAddress#getLocalHost()} is no answer, so the choice is, in order:
 * <ol>
 *   <li>an address given outright ({@code tcp.advertiseHost}, a config field);</li>
 *   <li>the bind address, when it is one address rather than the wildcard: nothing else is listened on;</li>
 *   <li>{@value #LOCAL_ADDR_ENV}, as torchrun's {@code --local-addr} ({@code tensorbus launch --local-addr} sets
 *       it);</li>
 *   <li>the address of the interface {@value #SOCKET_IFNAME_ENV} names (gloo's {@code GLOO_SOCKET_IFNAME});</li>
 *   <li>the source address of the route to the master: the address its peers' packets come back to, since the
 *       master's host reaches this one through it.</li>
 * </ol>
 * A loopback address is never published to a job whose master is on another address: peers elsewhere would
 * connect to themselves. That is refused with a message saying what to set.
 */
public final class AdvertisedHost {
    /** The environment variable with the address to publish ({@code tensorbus launch --local-addr} sets it). */
    public static final String LOCAL_ADDR_ENV = "TENSORBUS_LOCAL_ADDR";

    /** The environment variable naming the network interface(s) whose address to publish, comma-separated. */
    public static final String SOCKET_IFNAME_ENV = "TENSORBUS_SOCKET_IFNAME";

    /** What the refusal of a loopback address tells the user to do. */
    public static final String HOW_TO = "set " + SOCKET_IFNAME_ENV + " to the network interface the other hosts"
            + " reach this one on (for example eth0), or " + LOCAL_ADDR_ENV + " (tensorbus launch --local-addr) to"
            + " this host's address on that network";

    private AdvertisedHost() {
    }

    /**
     * Chooses the address to publish (see the class comment).
     *
     * @param given an address given outright, or null
     * @param env the environment to read {@value #LOCAL_ADDR_ENV} and {@value #SOCKET_IFNAME_ENV} from
     * @param bindHost the address the listener binds, {@code 0.0.0.0} or {@code ::} for every interface
     * @param masterHost the rendezvous host every process reaches, or null when there is none (a file store)
     * @param who who publishes, for messages ("rank 1", "RPC worker trainer1")
     * @return a literal address or a host name as given
     * @throws IllegalStateException when the choice is a loopback address while the master is not on loopback,
     *     or an interface named cannot be found or has no address
     */
    public static String choose(String given, Map<String, String> env, String bindHost, String masterHost,
            String who) {
        String chosen;
        String source;
        if (present(given)) {
            chosen = given.trim();
            source = "the address given";
        } else if (!isWildcard(bindHost)) {
            chosen = bindHost;
            source = "the bind address";
        } else if (present(env.get(LOCAL_ADDR_ENV))) {
            chosen = env.get(LOCAL_ADDR_ENV).trim();
            source = LOCAL_ADDR_ENV;
        } else if (present(env.get(SOCKET_IFNAME_ENV))) {
            chosen = ofInterfaces(env.get(SOCKET_IFNAME_ENV));
            source = SOCKET_IFNAME_ENV + "=" + env.get(SOCKET_IFNAME_ENV).trim();
        } else if (masterHost != null) {
            chosen = routeTo(masterHost);
            source = "the route to the master " + masterHost;
        } else {
            chosen = firstNonLoopback();
            source = "the first non-loopback interface";
        }
        if (isLoopback(chosen) && masterHost != null && !isLoopback(masterHost)) {
            throw new IllegalStateException(who + " would tell its peers to connect to " + chosen + " (from " + source
                    + "), a loopback address, while the job's master " + masterHost + " is not on loopback: ranks on"
                    + " other hosts could not reach it; " + HOW_TO);
        }
        return chosen;
    }

    /**
     * The local address this host's packets to {@code host} leave from: the kernel's route lookup, made by
     * connecting a UDP socket (nothing is sent).
     *
     * @throws IllegalStateException when {@code host} is unknown or no route leads to it
     */
    public static String routeTo(String host) {
        try (DatagramSocket probe = new DatagramSocket()) {
            probe.connect(new InetSocketAddress(InetAddress.getByName(host), 9));
            InetAddress local = probe.getLocalAddress();
            if (local == null || local.isAnyLocalAddress()) {
                throw new IllegalStateException("no route from this host to " + host + "; " + HOW_TO);
            }
            return local.getHostAddress();
        } catch (UnknownHostException e) {
            throw new IllegalStateException("unknown host '" + host + "'", e);
        } catch (IOException | UncheckedIOException e) {
            throw new IllegalStateException("no route from this host to " + host + " (" + e.getMessage() + "); "
                    + HOW_TO, e);
        }
    }

    /**
     * The first address of the first interface in {@code names} (comma-separated, as {@code GLOO_SOCKET_IFNAME})
     * that is up and has one, IPv4 before IPv6.
     *
     * @throws IllegalStateException naming the interfaces this host has when none of {@code names} qualifies
     */
    public static String ofInterfaces(String names) {
        for (String name : names.split(",")) {
            try {
                NetworkInterface nic = NetworkInterface.getByName(name.trim());
                if (nic != null && nic.isUp()) {
                    List<InetAddress> addresses = Collections.list(nic.getInetAddresses());
                    addresses.sort((a, b) -> Boolean.compare(!(a instanceof Inet4Address),
                            !(b instanceof Inet4Address)));
                    for (InetAddress a : addresses) {
                        if (!a.isLinkLocalAddress()) {
                            return a.getHostAddress();
                        }
                    }
                }
            } catch (SocketException e) {
                // Not usable: try the next name, and list what exists below.
            }
        }
        throw new IllegalStateException(SOCKET_IFNAME_ENV + "=" + names + " names no interface of this host that is"
                + " up and has an address; this host has " + interfaceList());
    }

    /** True for a loopback address or a name that resolves to one; false for a name that does not resolve. */
    public static boolean isLoopback(String host) {
        try {
            return InetAddress.getByName(host).isLoopbackAddress();
        } catch (UnknownHostException e) {
            return false;
        }
    }

    /** True for the addresses that bind every interface. */
    public static boolean isWildcard(String host) {
        return host == null || host.equals("0.0.0.0") || host.equals("::") || host.equals("[::]");
    }

    private static String firstNonLoopback() {
        try {
            for (NetworkInterface nic : Collections.list(NetworkInterface.getNetworkInterfaces())) {
                if (!nic.isUp() || nic.isLoopback()) {
                    continue;
                }
                for (InetAddress a : Collections.list(nic.getInetAddresses())) {
                    if (a instanceof Inet4Address && !a.isLinkLocalAddress()) {
                        return a.getHostAddress();
                    }
                }
            }
        } catch (SocketException e) {
            // Fall back to loopback below: a single-host job still works.
        }
        return InetAddress.getLoopbackAddress().getHostAddress();
    }

    private static String interfaceList() {
        List<String> names = new ArrayList<>();
        try {
            for (NetworkInterface nic : Collections.list(NetworkInterface.getNetworkInterfaces())) {
                List<String> addresses = Collections.list(nic.getInetAddresses()).stream()
                        .map(InetAddress::getHostAddress).toList();
                names.add(nic.getName() + (nic.isUp() ? " " : " (down) ") + addresses);
            }
        } catch (SocketException e) {
            return "interfaces that cannot be listed (" + e.getMessage() + ")";
        }
        return String.join(", ", names);
    }

    private static boolean present(String s) {
        return s != null && !s.isBlank();
    }
}
