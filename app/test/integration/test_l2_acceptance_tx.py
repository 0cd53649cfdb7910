"""L2 acceptance, transmit side and frame sizes: checksum insertion,
TSO, VLAN insertion, MTU boundaries, scattered jumbo frames.

Two ports of one adapter, each on a TAP wire in the test's namespace: the
kernel sends on port 0's wire, testpmd forwards to port 1 (csum, mac or io
forwarding) and the test captures what the kernel receives on port 1's wire.
"""
import re
import unittest

from scapy.all import IP, TCP, Dot1Q, Ether, IPv6

from harness.testpmd import TapRig, checksums_ok, corrupt_checksum, frame, parse_verbose, port_mac, xstats
from test_l2_acceptance import assert_ok


def reconfigure(tp, *commands):
    """Offload settings want stopped ports."""
    tp.cmd("port stop all")
    outs = [tp.cmd(c) for c in commands]
    out = tp.cmd("port start all")
    return "\n".join(outs + [out])


class TxChecksum(unittest.TestCase):
    def test_checksum_insertion_ipv4_ipv6_tcp_udp(self):
        rig = self.enterContext(TapRig(2))
        tp = rig.tp
        mac0 = port_mac(tp, 0)
        out = reconfigure(tp, "csum set ip hw 1", "csum set udp hw 1", "csum set tcp hw 1", "csum show 1")
        assert_ok(self, out, "csum set ... hw 1")
        for what in ("IP", "UDP", "TCP"):
            self.assertRegex(out, rf"(?i){what} checksum offload is hw")
        tp.cmd("set fwd csum")
        tp.cmd("start")
        sent = []
        for ip in (4, 6):
            for l4 in ("udp", "tcp"):
                f = frame(mac0, ip=ip, l4=l4, size=300 + 10 * len(sent))
                # wrong checksums from the kernel: only the adapter can make them right
                bad = corrupt_checksum(f, l4)
                if ip == 4:
                    bad = corrupt_checksum(Ether(bad), "ip")
                sent.append(bad)
        got = rig.io(send=[(0, f) for f in sent], capture=[1], expect=len(sent), timeout=3)
        self.assertEqual(len(got), len(sent), "every frame forwarded")
        for _, raw in got:
            p = Ether(raw)
            ip_ok, l4_ok = checksums_ok(raw)
            self.assertTrue(l4_ok, f"L4 checksum inserted: {p.summary()}")
            if IP in p:
                self.assertTrue(ip_ok, f"IPv4 header checksum inserted: {p.summary()}")
        self.assertEqual(sorted(len(r) for _, r in got), sorted(len(f) for f in sent))
        rig.tp.quit()


class Tso(unittest.TestCase):
    def test_tso_segments(self):
        mss = 800
        rig = self.enterContext(TapRig(2, app_args=["--enable-scatter"]))
        tp = rig.tp
        mac0 = port_mac(tp, 0)
        out = reconfigure(tp, "port config mtu 0 9000", "csum set ip hw 1", "csum set tcp hw 1",
                          f"tso set {mss} 1", "tso show 1")
        assert_ok(self, out, "TSO configuration")
        self.assertRegex(out, rf"segment size for non-tunneled packets is {mss}")
        tp.cmd("set fwd csum")
        tp.cmd("start")
        payload = bytes((i * 13 + 5) & 0xFF for i in range(4000))
        for ip in (4, 6):
            big = frame(mac0, ip=ip, l4="tcp", payload=payload,
                        ip_kw={"id": 0x1234} if ip == 4 else {},
                        l4_kw={"seq": 1000, "ack": 77, "flags": "PA", "window": 512})
            n = -(-len(payload) // mss)
            got = rig.io(send=[(0, bytes(big))], capture=[1], expect=n, timeout=3)
            self.assertEqual(len(got), n, f"IPv{ip}: {len(payload)} bytes in {mss}-byte segments")
            data = b""
            for k, (_, raw) in enumerate(got):
                p = Ether(raw)
                seg = bytes(p[TCP].payload)
                last = k == n - 1
                self.assertEqual(len(seg), len(payload) - mss * k if last else mss, f"IPv{ip} segment {k}")
                self.assertEqual(p[TCP].seq, 1000 + mss * k, f"IPv{ip} segment {k} seq")
                self.assertEqual(p[TCP].ack, 77)
                self.assertEqual(str(p[TCP].flags), "PA" if last else "A", f"IPv{ip} segment {k}: PSH on the last only")
                if ip == 4:
                    self.assertEqual(p[IP].id, (0x1234 + k) & 0xFFFF, f"segment {k} IP id")
                    self.assertEqual(p[IP].len, 40 + len(seg))
                else:
                    self.assertEqual(p[IPv6].plen, 20 + len(seg))
                ip_ok, l4_ok = checksums_ok(raw)
                self.assertTrue(l4_ok, f"IPv{ip} segment {k} TCP checksum")
                if ip == 4:
                    self.assertTrue(ip_ok, f"segment {k} IPv4 checksum")
                data += seg
            self.assertEqual(data, payload, f"IPv{ip}: segments carry the payload in order")
        rig.tp.quit()


class VlanInsert(unittest.TestCase):
    def test_tx_vlan_insert(self):
        rig = self.enterContext(TapRig(2))
        tp = rig.tp
        mac0 = port_mac(tp, 0)
        assert_ok(self, reconfigure(tp, "tx_vlan set 1 300"), "tx_vlan set 1 300")
        tp.cmd("set fwd mac")
        tp.cmd("start")
        got = rig.io(send=[(0, bytes(frame(mac0, size=200)))], capture=[1], expect=1, timeout=3)
        self.assertEqual(len(got), 1)
        p = Ether(got[0][1])
        self.assertIn(Dot1Q, p, p.summary())
        self.assertEqual(p[Dot1Q].vlan, 300)
        self.assertEqual(p[Dot1Q].type, 0x0800)
        self.assertEqual(len(p[IP]), 200)
        tp.cmd("stop")
        assert_ok(self, reconfigure(tp, "tx_vlan reset 1"), "tx_vlan reset 1")
        tp.cmd("start")
        got = rig.io(send=[(0, bytes(frame(mac0, size=200)))], capture=[1], expect=1, timeout=3)
        self.assertEqual(len(got), 1)
        self.assertNotIn(Dot1Q, Ether(got[0][1]))
        rig.tp.quit()


def oversize_counter(xs):
    hits = {k: v for k, v in xs.items() if re.search(r"oversize|too_long|long_pkt|jabber", k)}
    return hits


class Mtu(unittest.TestCase):
    def check_boundary(self, rig, mtu):
        tp = rig.tp
        mac = port_mac(tp, 0)
        self.assertRegex(tp.cmd("show port info 0"), rf"MTU: {mtu}\b")
        tp.cmd("clear port stats 0")
        tp.cmd("clear port xstats 0")
        tp.cmd("set verbose 1")
        tp.cmd("set fwd rxonly")
        tp.cmd("start")
        pkts = rig.rx(0, [bytes(frame(mac, size=n)) for n in (mtu - 1, mtu, mtu + 1)], count=2, timeout=4)
        self.assertEqual([p["length"] for p in pkts], [mtu - 1 + 14, mtu + 14],
                         f"IP packets of {mtu - 1} and {mtu} bytes pass, {mtu + 1} is dropped")
        tp.cmd("stop")
        stats = tp.port_stats(0)
        self.assertEqual(stats["RX-packets"], 2)
        self.assertEqual(stats["RX-errors"], 1, f"the oversize frame is counted: {stats}")
        xs = xstats(tp, 0)
        self.assertEqual(sum(oversize_counter(xs).values()), 1,
                         f"an xstat names the oversize drop: {oversize_counter(xs) or xs}")
        self.assertEqual(xs["rx_good_packets"], 2)
        return pkts

    def test_mtu_1500_boundary(self):
        rig = self.enterContext(TapRig(1))
        self.check_boundary(rig, 1500)
        rig.tp.quit()

    def test_mtu_9000_boundary_scattered(self):
        rig = self.enterContext(TapRig(1, app_args=["--enable-scatter"]))
        out = reconfigure(rig.tp, "port config mtu 0 9000")
        assert_ok(self, out, "port config mtu 0 9000")
        pkts = self.check_boundary(rig, 9000)
        for p in pkts:
            self.assertGreaterEqual(p["nb_segs"], 5, "a 9 KB frame spans 2 KB mbufs")
        rig.tp.quit()


class Scatter(unittest.TestCase):
    def test_jumbo_frames_in_small_mbufs_both_ways(self):
        """1 KB mbufs: a 9000-byte IP packet arrives in a chain of segments and
        leaves port 1 as one intact frame (multi-segment Tx)."""
        rig = self.enterContext(TapRig(2, app_args=["--mbuf-size=1152", "--enable-scatter",
                                                    "--total-num-mbufs=16384"]))
        tp = rig.tp
        mac0 = port_mac(tp, 0)
        out = reconfigure(tp, "port config mtu 0 9000", "port config mtu 1 9000",
                          "port config 1 tx_offload multi_segs on")
        assert_ok(self, out, "jumbo configuration")
        rig.start_rx(fwd="io")
        sent = [bytes(frame(mac0, size=n, l4=l4)) for n, l4 in ((9000, "udp"), (4000, "tcp"), (1500, "udp"))]
        got = rig.io(send=[(0, f) for f in sent], capture=[1], expect=len(sent), timeout=3)
        text = tp.collect(r"ol_flags:", len(sent), timeout=1)
        segs = [p["nb_segs"] for p in parse_verbose(text)]
        self.assertEqual(segs, [9, 4, 2], "frames of 9014, 4014 and 1514 bytes in 1024-byte segments")
        self.assertEqual([r for _, r in got], sent, "forwarded unchanged")
        rig.tp.quit()


if __name__ == "__main__":
    unittest.main()
