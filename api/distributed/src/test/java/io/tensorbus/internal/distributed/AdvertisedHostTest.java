package io.tensorbus.internal.distributed;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import org.junit.jupiter.api.Test;

class AdvertisedHostTest {
    @Test
    void anAddressGivenOutrightWinsOverTheEnvironment() {
        assertEquals("10.1.2.3", AdvertisedHost.choose("10.1.2.3", Map.of(AdvertisedHost.LOCAL_ADDR_ENV, "10.9.9.9"),
                "0.0.0.0", "10.1.2.1", "rank 1"));
    }

    @Test
    void localAddrComesBeforeTheInterfaceName() {
        assertEquals("10.9.9.9", AdvertisedHost.choose(null, Map.of(AdvertisedHost.LOCAL_ADDR_ENV, " 10.9.9.9 ",
                AdvertisedHost.SOCKET_IFNAME_ENV, "lo"), "0.0.0.0", "10.1.2.1", "rank 1"));
    }

    @Test
    void anInterfaceNameGivesThatInterfacesAddress() {
        assertEquals("127.0.0.1", AdvertisedHost.choose(null, Map.of(AdvertisedHost.SOCKET_IFNAME_ENV, "nosuch0,lo"),
                "0.0.0.0", "127.0.0.1", "rank 0"));
    }

    @Test
    void anUnknownInterfaceIsRefusedListingTheInterfacesThere() {
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> AdvertisedHost.choose(null,
                Map.of(AdvertisedHost.SOCKET_IFNAME_ENV, "nosuch0"), "0.0.0.0", "127.0.0.1", "rank 0"));
        assertTrue(e.getMessage().contains("TENSORBUS_SOCKET_IFNAME=nosuch0 names no interface")
                && e.getMessage().contains("lo "), e.getMessage());
    }

    @Test
    void aSpecificBindAddressIsPublishedAsItIsForNothingElseIsListenedOn() {
        assertEquals("127.0.0.1", AdvertisedHost.choose(null, Map.of(), "127.0.0.1", "127.0.0.1", "rank 0"));
        assertEquals("127.0.0.1", AdvertisedHost.choose(null, Map.of(AdvertisedHost.LOCAL_ADDR_ENV, "10.9.9.9"),
                "127.0.0.1", "127.0.0.1", "rank 0"));
    }

    @Test
    void aWildcardBindPublishesTheSourceAddressOfTheRouteToTheMaster() {
        assertEquals("127.0.0.1", AdvertisedHost.choose(null, Map.of(), "0.0.0.0", "127.0.0.1", "rank 0"));
        assertEquals("127.0.0.1", AdvertisedHost.routeTo("localhost"));
    }

    @Test
    void aLoopbackAddressIsNeverPublishedToAMasterOnAnotherAddress() {
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> AdvertisedHost.choose(
                "127.0.1.1", Map.of(), "0.0.0.0", "10.231.7.1", "rank 1"));
        assertTrue(e.getMessage().startsWith("rank 1 would tell its peers to connect to 127.0.1.1 (from the address"
                + " given), a loopback address, while the job's master 10.231.7.1 is not on loopback"), e.getMessage());
        assertTrue(e.getMessage().contains(AdvertisedHost.HOW_TO), e.getMessage());
    }

    @Test
    void anUnknownMasterHostIsNamed() {
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> AdvertisedHost.routeTo("no-such-host.invalid"));
        assertTrue(e.getMessage().contains("no-such-host.invalid"), e.getMessage());
    }
}
