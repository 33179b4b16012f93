package io.tensorbus.spi.support;

import java.net.InetAddress;
import java.net.UnknownHostException;

/** The address a backend publishes for its listening sockets, the same rule for every backend that listens. */
public final class ListenAddresses {
    private ListenAddresses() {
    }

    /**
     * The address peers dial: {@code advertised} when set, else {@code bindHost}, or this host's address when
     * binding every interface ({@code 0.0.0.0}).
     *
     * @param property the setting that gives {@code advertised}, named when this host's address is unknown
     * @throws IllegalStateException when binding every interface and this host's address cannot be told
     */
    public static String advertised(String advertised, String bindHost, String property) {
        if (advertised != null) {
            return advertised;
        }
        if (!bindHost.equals("0.0.0.0")) {
            return bindHost;
        }
        try {
            return InetAddress.getLocalHost().getHostAddress();
        } catch (UnknownHostException e) {
            throw new IllegalStateException("cannot tell this host's address; set " + property, e);
        }
    }
}
