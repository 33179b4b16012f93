package io.tensorbus.backend.gloo;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import java.net.InetSocketAddress;
import java.util.Arrays;
import java.util.HexFormat;
import org.junit.jupiter.api.Test;

/**
 * gloo's framing against byte transcripts written from its sources (gloo 5b14351: {@code tcp::Op::preamble},
 * {@code tcp::Address}, {@code Slot::build}, {@code Pair::connect}) and, for the preambles, seen on the wire from
 * Debian's python3-torch 1.13 (strace of a mixed job's gloo sockets).
 */
class GlooWireTest {
    private static final HexFormat HEX = HexFormat.of();

    @Test
    void aReceiveNoticeIsTheFortyEightBytesPyTorchWrites() {
        // The first writev of a PyTorch rank in a 4-byte all-reduce #0: NOTIFY_RECV_READY, slot 0x04 << 56, length 4.
        String wire = "3000000000000000" + "0300000000000000" + "0000000000000004" + "0000000000000000"
                + "0400000000000000" + "0000000000000000";
        ByteBuf encoded = Preamble.notice(Preamble.NOTIFY_RECV_READY, Slot.build(Slot.ALLREDUCE, 0), 4).encode();
        assertEquals(wire, ByteBufUtil.hexDump(encoded));
        assertEquals(new Preamble(48, 3, 0x0400000000000000L, 0, 4, 0),
                Preamble.decode(Unpooled.wrappedBuffer(HEX.parseHex(wire))));
    }

    @Test
    void dataCountsThePreambleAndThePayloadInNbytes() {
        Preamble p = Preamble.data(Slot.build(Slot.BROADCAST, 7), 1000);
        assertEquals(1048, p.nbytes());
        assertEquals(Preamble.SEND_UNBOUND_BUFFER, p.opcode());
        assertEquals(0x0600000007000000L, p.slot());
        assertEquals(p, Preamble.decode(p.encode()));
    }

    @Test
    void aPreambleWithAnUnknownOpcodeOrSizesThatDisagreeIsRefused() {
        ByteBuf bad = new Preamble(48, 9, 0, 0, 0, 0).encode();
        assertTrue(assertThrows(IllegalArgumentException.class, () -> Preamble.decode(bad)).getMessage()
                .contains("opcode 9"));
        ByteBuf liar = new Preamble(48, Preamble.SEND_UNBOUND_BUFFER, 0, 0, 10, 0).encode();
        assertTrue(assertThrows(IllegalArgumentException.class, () -> Preamble.decode(liar)).getMessage()
                .contains("nbytes=48"));
    }

    @Test
    void slotsCarryThePrefixAndTheCounterAsGlooBuildsThem() {
        assertEquals(0x0700000000000000L, Slot.build(Slot.BARRIER, 0));
        assertEquals(0x04ffffffff000000L, Slot.build(Slot.ALLREDUCE, 0xffffffffL));
        assertEquals(0x0400000000000000L, Slot.build(Slot.ALLREDUCE, 1L << 32), "the counter wraps at 32 bits");
        assertEquals(Slot.ALLREDUCE, Slot.prefix(0x0400000100000000L));
        assertEquals(1, Slot.tag(0x0400000001000000L));
        assertEquals("allReduce #1", Slot.describe(0x0400000001000000L));
        assertEquals("send/recv tag 5", Slot.describe(5));
    }

    @Test
    void anIpv4AddressIsASockaddrStorageAndASequenceNumber() {
        GlooAddress a = GlooAddress.of(new InetSocketAddress("127.0.0.1", 0x9c40));
        byte[] bytes = a.bytes();
        assertEquals(GlooAddress.BYTES, bytes.length);
        // sa_family AF_INET (2, native order), sin_port big-endian, sin_addr, zeros, then ssize_t -1.
        assertEquals("02009c407f000001" + "00".repeat(120) + "ff".repeat(8), HEX.formatHex(bytes));
        assertEquals(a, GlooAddress.parse(bytes, 0));
        assertEquals(new InetSocketAddress("127.0.0.1", 0x9c40), a.socketAddress());
    }

    @Test
    void theSecondAddressOfAListIsTheOneForTheSecondPeer() {
        byte[] list = new byte[2 * GlooAddress.BYTES];
        System.arraycopy(GlooAddress.of(new InetSocketAddress("10.0.0.1", 1000)).bytes(), 0, list, 0,
                GlooAddress.BYTES);
        System.arraycopy(GlooAddress.of(new InetSocketAddress("10.0.0.2", 2000)).bytes(), 0, list,
                GlooAddress.BYTES, GlooAddress.BYTES);
        assertEquals(new InetSocketAddress("10.0.0.2", 2000), GlooAddress.parse(list, 1).socketAddress());
        assertTrue(assertThrows(IllegalArgumentException.class, () -> GlooAddress.parse(list, 2)).getMessage()
                .contains("no gloo address #2"));
    }

    @Test
    void theGreaterAddressDialsComparingPortsAsALittleEndianMachineReadsThem() {
        // 0x0102 is stored 01 02 and read as 0x0201; 0x0201 is stored 02 01 and read as 0x0102: the second is less.
        GlooAddress a = GlooAddress.of(new InetSocketAddress("127.0.0.1", 0x0102));
        GlooAddress b = GlooAddress.of(new InetSocketAddress("127.0.0.1", 0x0201));
        assertTrue(a.connectsTo(b));
        assertFalse(b.connectsTo(a));
        GlooAddress higherHost = GlooAddress.of(new InetSocketAddress("127.0.0.2", 1));
        assertTrue(higherHost.connectsTo(a), "the address bytes decide before the port");
        assertThrows(IllegalArgumentException.class, () -> a.connectsTo(a));
    }

    @Test
    void anAddressOfAnotherFamilyIsRefusedNamingIt() {
        byte[] unix = new byte[GlooAddress.BYTES];
        unix[0] = 1;
        assertTrue(assertThrows(IllegalArgumentException.class, () -> GlooAddress.parse(unix, 0)).getMessage()
                .contains("family 1"));
        byte[] v6 = GlooAddress.of(new InetSocketAddress("::1", 80)).bytes();
        assertArrayEquals(new byte[] {10, 0, 0, 80}, Arrays.copyOf(v6, 4));
        assertThrows(IllegalArgumentException.class, () -> GlooAddress.parse(v6, 0)
                .connectsTo(GlooAddress.of(new InetSocketAddress("127.0.0.1", 80))));
    }
}
