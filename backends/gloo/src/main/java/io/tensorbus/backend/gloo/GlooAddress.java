package io.tensorbus.backend.gloo;

import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.util.Arrays;

/**
 * A pair's listening address as gloo's TCP transport publishes it ({@code tcp::Address}): a Linux
 * {@code sockaddr_storage} (128 bytes: native-order family, network-order port, the address) followed by a native
 * {@code ssize_t} sequence number, -1 when unset. Which side of a pair connects is decided by comparing the two
 * addresses as gloo does ({@link #connectsTo}).
 *
 * @param sockaddr the 128 bytes of the {@code sockaddr_storage}
 * @param seq the sequence number, -1 when unset
 */
record GlooAddress(byte[] sockaddr, long seq) {
    /** The size of one address in the store. */
    static final int BYTES = 136;
    private static final int SOCKADDR_BYTES = 128;
    private static final int AF_INET = 2;
    private static final int AF_INET6 = 10;

    GlooAddress {
        if (sockaddr.length != SOCKADDR_BYTES) {
            throw new IllegalArgumentException("a sockaddr_storage has 128 bytes, not " + sockaddr.length);
        }
        sockaddr = sockaddr.clone();
    }

    /** This address with sequence number {@code seq}. */
    GlooAddress withSeq(long seq) {
        return new GlooAddress(sockaddr, seq);
    }

    /** The address of a socket listening at {@code at}, sequence number unset. */
    static GlooAddress of(InetSocketAddress at) {
        byte[] ss = new byte[SOCKADDR_BYTES];
        InetAddress ip = at.getAddress();
        int port = at.getPort();
        ss[2] = (byte) (port >>> 8);
        ss[3] = (byte) port;
        if (ip instanceof Inet4Address) {
            ss[0] = AF_INET;
            System.arraycopy(ip.getAddress(), 0, ss, 4, 4);
        } else if (ip instanceof Inet6Address v6) {
            ss[0] = AF_INET6;
            System.arraycopy(ip.getAddress(), 0, ss, 8, 16);
            int scope = v6.getScopeId();
            ss[24] = (byte) scope;
            ss[25] = (byte) (scope >>> 8);
            ss[26] = (byte) (scope >>> 16);
            ss[27] = (byte) (scope >>> 24);
        } else {
            throw new IllegalArgumentException("no IP address in " + at);
        }
        return new GlooAddress(ss, -1);
    }

    /**
     * Reads the {@code index}-th address of a rank's published list.
     *
     * @throws IllegalArgumentException when the list is too short or the address is neither IPv4 nor IPv6
     */
    static GlooAddress parse(byte[] list, int index) {
        return parse(list, index * BYTES, "a list of " + list.length + " bytes holds no gloo address #" + index
                + " (" + BYTES + " bytes each)");
    }

    /**
     * Reads the address at byte {@code from} of {@code bytes}.
     *
     * @throws IllegalArgumentException saying {@code missing} when the bytes end first, or when the address is
     *     neither IPv4 nor IPv6
     */
    static GlooAddress parse(byte[] bytes, int from, String missing) {
        if (from < 0 || from + BYTES > bytes.length) {
            throw new IllegalArgumentException(missing);
        }
        long seq = 0;
        for (int i = 7; i >= 0; i--) {
            seq = (seq << 8) | (bytes[from + SOCKADDR_BYTES + i] & 0xff);
        }
        GlooAddress a = new GlooAddress(Arrays.copyOfRange(bytes, from, from + SOCKADDR_BYTES), seq);
        a.family();
        return a;
    }

    /** The 136 bytes gloo stores. */
    byte[] bytes() {
        byte[] out = Arrays.copyOf(sockaddr, BYTES);
        for (int i = 0; i < 8; i++) {
            out[SOCKADDR_BYTES + i] = (byte) (seq >>> (8 * i));
        }
        return out;
    }

    /** Where to connect. */
    InetSocketAddress socketAddress() {
        boolean v4 = family() == AF_INET;
        byte[] ip = v4 ? Arrays.copyOfRange(sockaddr, 4, 8) : Arrays.copyOfRange(sockaddr, 8, 24);
        try {
            return new InetSocketAddress(InetAddress.getByAddress(ip), port());
        } catch (UnknownHostException e) {
            throw new IllegalStateException("an address of " + ip.length + " bytes was refused", e);
        }
    }

    /**
     * True when this side of a pair connects to {@code peer} and false when it accepts, as gloo's
     * {@code Pair::connect} (from 31b1f02, {@code Device::isInitiator}) decides: the raw addresses compared byte by
     * byte, then the ports as the native {@code uint16_t}s of their network-order bytes, then (two pairs of one
     * listening socket) the sequence numbers; the greater side connects.
     *
     * @throws IllegalArgumentException when the families differ or the addresses are equal
     */
    boolean connectsTo(GlooAddress peer) {
        if (family() != peer.family()) {
            throw new IllegalArgumentException("gloo pairs need one address family: " + this + " and " + peer);
        }
        int from = family() == AF_INET ? 4 : 8;
        int to = family() == AF_INET ? 8 : 24;
        int rv = Arrays.compareUnsigned(sockaddr, from, to, peer.sockaddr, from, to);
        if (rv == 0) {
            rv = rawPort() - peer.rawPort();
        }
        if (rv == 0) {
            rv = (int) (seq - peer.seq);
        }
        if (rv == 0) {
            throw new IllegalArgumentException("a gloo pair cannot connect to itself (" + this + ")");
        }
        return rv > 0;
    }

    private int family() {
        int f = (sockaddr[0] & 0xff) | (sockaddr[1] & 0xff) << 8;
        if (f != AF_INET && f != AF_INET6) {
            throw new IllegalArgumentException("gloo address of family " + f + "; only AF_INET (2) and AF_INET6 (10)"
                    + " are served");
        }
        return f;
    }

    private int port() {
        return (sockaddr[2] & 0xff) << 8 | (sockaddr[3] & 0xff);
    }

    /** The port's two bytes read as a little-endian machine reads the network-order field. */
    private int rawPort() {
        return (sockaddr[2] & 0xff) | (sockaddr[3] & 0xff) << 8;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof GlooAddress a && a.seq == seq && Arrays.equals(a.sockaddr, sockaddr);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(sockaddr) * 31 + Long.hashCode(seq);
    }

    @Override
    public String toString() {
        InetSocketAddress at = socketAddress();
        return "[" + at.getAddress().getHostAddress() + "]:" + at.getPort() + (seq == -1 ? "" : "$" + seq);
    }
}
