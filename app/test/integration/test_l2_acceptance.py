"""L2 acceptance, receive side: what net_cna reports for frames the
kernel sends over a TAP wire.

Each test runs Debian's dpdk-testpmd on ports whose wires are TAP interfaces
moved into a network namespace of the test's own (TapRig), sends frames built
by scapy from there, and asserts on testpmd's verbose packet dumps (ol_flags,
packet types, RSS hash and queue, VLAN tci) and its statistics. Where a
feature is missing in the PMD the test fails: the suite is the acceptance
criterion. Sibling files: test_l2_acceptance_tx.py (offloads on transmit,
MTU, scattered frames), test_l2_acceptance_ops.py (queues, statistics,
configuration life cycle, link).
"""
import ipaddress
import re
import unittest

from harness.testpmd import TapRig, corrupt_checksum, frame, port_mac, rss_key, rss_reta, set_reta, toeplitz

GOOD_IP, BAD_IP = "RTE_MBUF_F_RX_IP_CKSUM_GOOD", "RTE_MBUF_F_RX_IP_CKSUM_BAD"
GOOD_L4, BAD_L4 = "RTE_MBUF_F_RX_L4_CKSUM_GOOD", "RTE_MBUF_F_RX_L4_CKSUM_BAD"
VLAN_STRIPPED = "RTE_MBUF_F_RX_VLAN_STRIPPED"
RSS_HASH = "RTE_MBUF_F_RX_RSS_HASH"
FOREIGN = "02:00:00:00:77:01"       # nobody's unicast address
GROUP = "01:00:5e:01:02:03"         # an IPv4 multicast group's MAC
OTHER_GROUP = "01:00:5e:01:02:04"


def assert_ok(test, out, what):
    test.assertNotRegex(out, r"(?i)\b(fail|error|invalid|not supported|bad arguments|please stop)",
                        f"{what}:\n{out}")


class RxChecksum(unittest.TestCase):
    def test_checksum_flags_good_and_bad(self):
        """IPv4 header and TCP/UDP over IPv4/IPv6: good checksums flagged
        GOOD, bad ones BAD, and no frame dropped for a bad checksum."""
        rig = self.enterContext(TapRig(1, app_args=["--enable-rx-cksum"]))
        mac = port_mac(rig.tp, 0)
        rig.start_rx()
        cases = []  # (frame bytes, expected ip flag or None, expected l4 flag)
        for ip in (4, 6):
            for l4 in ("udp", "tcp"):
                good = frame(mac, ip=ip, l4=l4, size=200)
                cases.append((bytes(good), GOOD_IP if ip == 4 else None, GOOD_L4, f"IPv{ip}/{l4} good"))
                cases.append((corrupt_checksum(good, l4), GOOD_IP if ip == 4 else None, BAD_L4,
                              f"IPv{ip}/{l4} bad {l4}"))
            if ip == 4:
                cases.append((corrupt_checksum(frame(mac, l4="udp", size=200), "ip"), BAD_IP, None,
                              "IPv4 bad header"))
        pkts = rig.rx(0, [c[0] for c in cases])
        self.assertEqual(len(pkts), len(cases), "every frame is delivered, bad checksums too")
        for pkt, (_, ip_flag, l4_flag, what) in zip(pkts, cases):
            if ip_flag:
                self.assertIn(ip_flag, pkt["ol_flags"], what)
            if l4_flag:
                self.assertIn(l4_flag, pkt["ol_flags"], what)
        self.assertEqual(rig.tp.port_stats(0)["RX-packets"], len(cases))
        rig.tp.quit()


class PacketTypes(unittest.TestCase):
    def test_hw_packet_types(self):
        rig = self.enterContext(TapRig(1))
        mac = port_mac(rig.tp, 0)
        rig.start_rx()
        cases = [
            (frame(mac, ip=4, l4="udp"), ["L2_ETHER", "L3_IPV4", "L4_UDP"]),
            (frame(mac, ip=4, l4="tcp"), ["L2_ETHER", "L3_IPV4", "L4_TCP"]),
            (frame(mac, ip=6, l4="udp"), ["L2_ETHER", "L3_IPV6", "L4_UDP"]),
            (frame(mac, ip=6, l4="tcp"), ["L2_ETHER", "L3_IPV6", "L4_TCP"]),
            (frame(mac, ip=4, l4="icmp"), ["L2_ETHER", "L3_IPV4", "L4_ICMP"]),
            (frame(mac, ip=None), ["L2_ETHER"]),
        ]
        supported = rig.tp.cmd("show port 0 ptypes")
        if "L4_ICMP" not in supported:
            # an ICMP the PMD does not name is a non-fragment of another L4
            cases[4] = (cases[4][0], ["L2_ETHER", "L3_IPV4", "L4_NONFRAG"])
        pkts = rig.rx(0, [bytes(f) for f, _ in cases])
        self.assertEqual(len(pkts), len(cases))
        for pkt, (f, want) in zip(pkts, cases):
            got = pkt["hw_ptype"] or []
            # L3_IPV4 may be reported as L3_IPV4_EXT_UNKNOWN (options not parsed)
            norm = [re.sub(r"_EXT(_UNKNOWN)?$", "", t) for t in got]
            for t in got:
                self.assertIn(t, supported, f"{t} reported but not listed by `show port 0 ptypes`")
            self.assertEqual(norm, want, f"{f.summary()}: hw ptype {got}")
        rig.tp.quit()


def flow_tuple(ip, saddr, daddr, sport, dport, l4_hashed):
    fam = ipaddress.IPv4Address if ip == 4 else ipaddress.IPv6Address
    data = fam(saddr).packed + fam(daddr).packed
    if l4_hashed:
        data += sport.to_bytes(2, "big") + dport.to_bytes(2, "big")
    return data


class Rss(unittest.TestCase):
    def check_flows(self, rig, mac, key, reta, l4_types):
        frames, expect = [], []
        for i in range(24):
            ip = 4 if i % 2 == 0 else 6
            l4 = ("udp", "tcp", "icmp")[i % 3]
            saddr = f"10.{i}.{3 * i}.7" if ip == 4 else f"2001:db8:{i:x}::{7 * i + 1:x}"
            daddr = f"192.0.2.{i + 1}" if ip == 4 else f"2001:db8:ffff::{i + 1:x}"
            sport, dport = 1000 + 17 * i, 5000 + 31 * i
            f = frame(mac, ip=ip, l4=l4, saddr=saddr, daddr=daddr, sport=sport, dport=dport)
            h = toeplitz(key, flow_tuple(ip, saddr, daddr, sport, dport, l4 in l4_types))
            frames.append(bytes(f))
            expect.append((h, reta[h % 128], f.summary()))
        pkts = rig.rx(0, frames)
        self.assertEqual(len(pkts), len(frames))
        # frames of different queues may be printed out of order: match by source
        by_src = {}
        for pkt in pkts:
            self.assertIn(RSS_HASH, pkt["ol_flags"], pkt["text"])
            by_src.setdefault(pkt["rss_hash"], []).append(pkt)
        for h, q, what in expect:
            self.assertIn(h, by_src, f"{what}: no packet with the expected RSS hash {h:#010x}; "
                                     f"got {sorted(hex(k) for k in by_src if k is not None)}")
            self.assertEqual(by_src[h][0]["queue"], q, f"{what}: hash {h:#x} -> reta[{h % 128}]")
        return {q for _, q, _ in expect}

    def test_toeplitz_hash_and_redirection_table(self):
        rig = self.enterContext(TapRig(1, app_args=["--rxq=4", "--txq=4"]))
        tp = rig.tp
        mac = port_mac(tp, 0)
        assert_ok(self, tp.cmd("port config all rss all"), "port config all rss all")
        funcs = tp.cmd("show port 0 rss-hash")
        for t in ("ipv4", "ipv4-tcp", "ipv4-udp", "ipv6", "ipv6-tcp", "ipv6-udp"):
            self.assertRegex(funcs, rf"(?<![\w-]){t}(?![\w-])", f"hash type {t} enabled")
        key, out = rss_key(tp, 0)
        self.assertEqual(len(key), 40, out)
        reta = rss_reta(tp, 0)
        self.assertEqual(set(reta), {0, 1, 2, 3}, "the default RETA spreads over every Rx queue")
        rig.start_rx()
        queues = self.check_flows(rig, mac, key, reta, ("udp", "tcp"))
        self.assertGreater(len(queues), 1, "24 flows over 4 queues")
        # the redirection table: everything to queue 3, then odd entries to 1
        tp.cmd("stop")
        assert_ok(self, set_reta(tp, 0, {i: 3 for i in range(128)}), "reta update")
        assert_ok(self, set_reta(tp, 0, {i: 1 for i in range(1, 128, 2)}), "reta update")
        reta = rss_reta(tp, 0)
        self.assertEqual(reta, [3 if i % 2 == 0 else 1 for i in range(128)])
        tp.cmd("start")
        self.assertEqual(self.check_flows(rig, mac, key, reta, ("udp", "tcp")), {1, 3})
        # a new key; IP-only hashing takes no ports
        tp.cmd("stop")
        new_key = bytes((i * 37 + 11) & 0xFF for i in range(40))
        for t in ("ipv4", "ipv4-udp", "ipv4-tcp", "ipv6", "ipv6-udp", "ipv6-tcp"):
            assert_ok(self, tp.cmd(f"port config 0 rss-hash-key {t} {new_key.hex()}"), "rss-hash-key")
        self.assertEqual(rss_key(tp, 0)[0], new_key)
        assert_ok(self, tp.cmd("port config all rss ip"), "port config all rss ip")
        self.assertNotRegex(tp.cmd("show port 0 rss-hash"), r"ipv4-udp|ipv4-tcp|ipv6-udp|ipv6-tcp")
        tp.cmd("start")
        self.check_flows(rig, mac, new_key, reta, ())
        rig.tp.quit()

    def test_sixteen_queues(self):
        rig = self.enterContext(TapRig(1, app_args=["--rxq=16", "--txq=16", "--rxd=64", "--txd=64",
                                                    "--total-num-mbufs=16384"]))
        tp = rig.tp
        self.assertRegex(tp.cmd("show port info 0"), r"Max possible RX queues: (1[6-9]|[2-9]\d|\d{3,})")
        self.assertEqual(set(rss_reta(tp, 0)), set(range(16)))
        mac = port_mac(tp, 0)
        tp.cmd("port config all rss all")
        key = rss_key(tp, 0)[0]
        rig.start_rx()
        self.check_flows(rig, mac, key, rss_reta(tp, 0), ("udp", "tcp"))
        rig.tp.quit()


class Vlan(unittest.TestCase):
    def test_vlan_filter(self):
        rig = self.enterContext(TapRig(1))
        tp = rig.tp
        mac = port_mac(tp, 0)
        assert_ok(self, tp.cmd("vlan set filter on 0"), "vlan set filter on")
        assert_ok(self, tp.cmd("rx_vlan add 100 0"), "rx_vlan add 100")
        assert_ok(self, tp.cmd("rx_vlan add 101 0"), "rx_vlan add 101")
        rig.start_rx()
        pkts = rig.rx(0, [bytes(frame(mac, vlan=v, size=100 + v)) for v in (100, 200, 101)] +
                      [bytes(frame(mac, size=300))], count=3)
        self.assertEqual(sorted(p["length"] for p in pkts), sorted([14 + 300, 18 + 200, 18 + 201]),
                         "VLAN 100, 101 and untagged pass, 200 is filtered")
        assert_ok(self, tp.cmd("rx_vlan rm 100 0"), "rx_vlan rm 100")
        pkts = rig.rx(0, [bytes(frame(mac, vlan=v, size=100 + v)) for v in (100, 101)], count=1)
        self.assertEqual([p["length"] for p in pkts], [18 + 201], "VLAN 100 removed")
        assert_ok(self, tp.cmd("vlan set filter off 0"), "vlan set filter off")
        pkts = rig.rx(0, [bytes(frame(mac, vlan=v, size=100 + v)) for v in (100, 200)], count=2)
        self.assertEqual(len(pkts), 2, "without the filter every VLAN passes")
        rig.tp.quit()

    def test_vlan_strip(self):
        rig = self.enterContext(TapRig(1))
        tp = rig.tp
        mac = port_mac(tp, 0)
        assert_ok(self, tp.cmd("vlan set strip on 0"), "vlan set strip on")
        rig.start_rx()
        pkts = rig.rx(0, [bytes(frame(mac, vlan=300, size=100))])
        self.assertEqual(len(pkts), 1)
        pkt = pkts[0]
        self.assertIn(VLAN_STRIPPED, pkt["ol_flags"], pkt["text"])
        self.assertEqual(pkt["vlan_tci"] & 0xFFF, 300, pkt["text"])
        self.assertEqual(pkt["length"], 14 + 100, "the tag is removed from the data")
        self.assertEqual(pkt["type"], 0x0800, "the inner EtherType remains")
        tp.cmd("stop")
        assert_ok(self, tp.cmd("vlan set strip off 0"), "vlan set strip off")
        tp.cmd("start")
        pkts = rig.rx(0, [bytes(frame(mac, vlan=300, size=100))])
        self.assertEqual(len(pkts), 1)
        pkt = pkts[0]
        self.assertNotIn(VLAN_STRIPPED, pkt["ol_flags"])
        self.assertEqual(pkt["length"], 18 + 100)
        self.assertEqual(pkt["type"], 0x8100)
        rig.tp.quit()


class MacFilters(unittest.TestCase):
    def test_unicast_filter_add_remove_and_limit(self):
        rig = self.enterContext(TapRig(1))
        tp = rig.tp
        mac = port_mac(tp, 0)
        tp.cmd("set promisc 0 off")
        rig.start_rx()
        self.assertEqual(rig.rx(0, [bytes(frame(FOREIGN))], count=0), [], "foreign MAC filtered")
        assert_ok(self, tp.cmd(f"mac_addr add 0 {FOREIGN}"), "mac_addr add")
        self.assertIn(FOREIGN.upper(), tp.cmd("show port 0 macs").upper())
        pkts = rig.rx(0, [bytes(frame(FOREIGN)), bytes(frame(mac))])
        self.assertEqual([p["dst"] for p in pkts], [FOREIGN, mac], "added and primary MAC pass")
        assert_ok(self, tp.cmd(f"mac_addr remove 0 {FOREIGN}"), "mac_addr remove")
        pkts = rig.rx(0, [bytes(frame(FOREIGN)), bytes(frame(mac))], count=1)
        self.assertEqual([p["dst"] for p in pkts], [mac], "removed MAC filtered again")
        # fill the table: the advertised maximum counts the primary address
        m = re.search(r"Maximum number of MAC addresses: (\d+)", tp.cmd("show port info 0"))
        limit = int(m.group(1))
        self.assertGreater(limit, 1, "more than the primary MAC")
        added = [f"02:00:00:01:{i >> 8:02x}:{i & 0xFF:02x}" for i in range(limit - 1)]
        for a in added:
            assert_ok(self, tp.cmd(f"mac_addr add 0 {a}"), f"mac_addr add {a} within the limit {limit}")
        out = tp.cmd("mac_addr add 0 02:00:00:02:00:00")
        self.assertRegex(out, r"(?i)fail|error|no space|full", "adding beyond the advertised maximum fails")
        pkts = rig.rx(0, [bytes(frame(added[-1])), bytes(frame(added[0])), bytes(frame("02:00:00:02:00:00"))],
                      count=2)
        self.assertEqual([p["dst"] for p in pkts], [added[-1], added[0]])
        rig.tp.quit()

    def test_multicast_list(self):
        rig = self.enterContext(TapRig(1))
        tp = rig.tp
        tp.cmd("set promisc 0 off")
        tp.cmd("set allmulti 0 off")
        rig.start_rx()
        self.assertEqual(rig.rx(0, [bytes(frame(GROUP))], count=0), [], "unregistered group filtered")
        assert_ok(self, tp.cmd(f"mcast_addr add 0 {GROUP}"), "mcast_addr add")
        pkts = rig.rx(0, [bytes(frame(GROUP)), bytes(frame(OTHER_GROUP)), bytes(frame("ff:ff:ff:ff:ff:ff"))],
                      count=2)
        self.assertEqual([p["dst"] for p in pkts], [GROUP, "ff:ff:ff:ff:ff:ff"],
                         "registered group and broadcast pass, another group does not")
        assert_ok(self, tp.cmd(f"mcast_addr remove 0 {GROUP}"), "mcast_addr remove")
        self.assertEqual(rig.rx(0, [bytes(frame(GROUP))], count=0), [], "removed group filtered")
        rig.tp.quit()

    def test_promiscuous_and_allmulticast(self):
        rig = self.enterContext(TapRig(1))
        tp = rig.tp
        rig.start_rx()
        self.assertRegex(tp.cmd("show port info 0"), r"Promiscuous mode: enabled")
        pkts = rig.rx(0, [bytes(frame(FOREIGN)), bytes(frame(GROUP))])
        self.assertEqual(len(pkts), 2, "promiscuous: foreign unicast and multicast pass")
        tp.cmd("set promisc 0 off")
        tp.cmd("set allmulti 0 off")
        self.assertEqual(rig.rx(0, [bytes(frame(FOREIGN)), bytes(frame(GROUP))], count=0), [])
        tp.cmd("set allmulti 0 on")
        self.assertRegex(tp.cmd("show port info 0"), r"Allmulticast mode: enabled")
        pkts = rig.rx(0, [bytes(frame(FOREIGN)), bytes(frame(GROUP)), bytes(frame(OTHER_GROUP))], count=2)
        self.assertEqual([p["dst"] for p in pkts], [GROUP, OTHER_GROUP], "all-multicast: every group")
        tp.cmd("set promisc 0 on")
        self.assertEqual(len(rig.rx(0, [bytes(frame(FOREIGN))])), 1)
        rig.tp.quit()


if __name__ == "__main__":
    unittest.main()
