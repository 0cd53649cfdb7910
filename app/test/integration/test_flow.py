"""rte_flow on net_cna: Debian's dpdk-testpmd `flow` commands on a
port whose wire is a TAP interface; scapy sends from the kernel side and the
tests assert on testpmd's verbose dumps (queue, "FDIR matched ID=" for a
MARK), its `flow query ... count` and `flow list` output, and the exact
rte_flow_error messages of rules the adapter cannot do. testpmd flushes a
port's rules when it stops the port, so rules surviving a stop/start (and
marks in the mbuf) are covered through the ethdev API in
app/test/unit/pmd/test_flow.cpp.
"""
import re
import unittest

from harness.testpmd import TapRig, frame, port_mac

PORT = 0


def fdir_id(pkt):
    m = re.search(r"FDIR matched ID=(0x[0-9a-f]+)", pkt["text"])
    return int(m.group(1), 16) if m else None


class FlowRig:
    """A TapRig with 4 Rx/Tx queues, forwarding in rxonly with verbose dumps."""

    def __init__(self, test):
        self.test = test
        self.rig = test.enterContext(TapRig(1, app_args=["--rxq=4", "--txq=4"]))
        self.tp = self.rig.tp
        self.mac = port_mac(self.tp, PORT)
        self.rig.start_rx()

    def create(self, rule):
        out = self.tp.cmd(f"flow create {PORT} {rule}")
        m = re.search(r"Flow rule #(\d+) created", out)
        self.test.assertIsNotNone(m, f"flow create {rule}:\n{out}")
        return int(m.group(1))

    def query_count(self, rule_id):
        out = self.tp.cmd(f"flow query {PORT} {rule_id} count")
        hits = re.search(r"hits:\s*(\d+)", out)
        nbytes = re.search(r"bytes:\s*(\d+)", out)
        self.test.assertTrue(hits and nbytes, out)
        return int(hits.group(1)), int(nbytes.group(1))

    def rx(self, frames, count=None):
        return self.rig.rx(PORT, frames, count=count)


class FlowTraffic(unittest.TestCase):
    def test_queue_and_mark(self):
        """A UDP port goes to queue 3 with mark 0x1234; other traffic is not
        marked and is spread by the port's RSS as before."""
        f = FlowRig(self)
        out = f.tp.cmd(f"flow validate {PORT} ingress pattern eth / ipv4 / udp dst is 4000 / end "
                       "actions mark id 0x1234 / queue index 3 / end")
        self.assertIn("Flow rule validated", out)
        f.create("ingress pattern eth / ipv4 / udp dst is 4000 / end actions mark id 0x1234 / queue index 3 / end")
        hit = [bytes(frame(f.mac, dport=4000, sport=1000 + i)) for i in range(6)]
        miss = [bytes(frame(f.mac, dport=4001, sport=1000 + i)) for i in range(6)]
        pkts = f.rx(hit + miss)
        self.assertEqual(len(pkts), 12)
        marked = [p for p in pkts if fdir_id(p) is not None]
        self.assertEqual(len(marked), 6, "exactly the matching frames carry the mark")
        for p in marked:
            self.assertEqual(fdir_id(p), 0x1234, p["text"])
            self.assertEqual(p["queue"], 3, p["text"])
            self.assertIn("RTE_MBUF_F_RX_FDIR_ID", p["ol_flags"])
            # the mark travels in the RSS hash's place in the 16-byte CQE
            self.assertNotIn("RTE_MBUF_F_RX_RSS_HASH", p["ol_flags"])
        for p in pkts:
            if fdir_id(p) is None:
                self.assertNotIn("RTE_MBUF_F_RX_FDIR", p["ol_flags"])
                self.assertIn("RTE_MBUF_F_RX_RSS_HASH", p["ol_flags"])
        self.assertRegex(f.tp.cmd(f"flow list {PORT}"), r"(?m)^0\s+0\s+0\s+i-+\s+ETH IPV4 UDP => MARK QUEUE")

    def test_drop_and_count(self):
        """DROP + COUNT: the frames never reach testpmd, the counter sees them
        all with their bytes."""
        f = FlowRig(self)
        rule = f.create("ingress pattern eth / ipv4 src is 192.0.2.77 / end actions drop / count / end")
        dropped = bytes(frame(f.mac, saddr="192.0.2.77"))
        passed = bytes(frame(f.mac, saddr="192.0.2.78"))
        pkts = f.rx([dropped, dropped, passed, dropped], count=1)
        self.assertEqual(len(pkts), 1, "only the frame from another source arrives")
        self.assertEqual(f.query_count(rule), (3, 3 * len(dropped)))

    def test_rss_action_spreads_over_its_queue_set(self):
        """RSS over queues 1 and 2 only: many flows land on both, none elsewhere."""
        f = FlowRig(self)
        f.create("ingress pattern eth / ipv4 / tcp / end actions rss types ipv4-tcp end queues 1 2 end / end")
        frames = [bytes(frame(f.mac, l4="tcp", sport=20000 + 7 * i, dport=80, saddr=f"192.0.2.{10 + i}"))
                  for i in range(24)]
        pkts = f.rx(frames)
        self.assertEqual(len(pkts), len(frames))
        self.assertEqual({p["queue"] for p in pkts}, {1, 2}, "the rule's queue set, both used")

    def test_priority_and_destroy(self):
        """Priority 0 beats priority 1 whatever the order of creation;
        destroying the winner hands the frames to the other rule."""
        f = FlowRig(self)
        f.create("ingress priority 1 pattern eth / ipv4 / udp / end actions queue index 1 / end")
        specific = f.create("ingress priority 0 pattern eth / ipv4 / udp dst is 5000 / end "
                            "actions queue index 2 / end")
        pkts = f.rx([bytes(frame(f.mac, dport=5000)), bytes(frame(f.mac, dport=5001))])
        self.assertEqual(sorted(p["queue"] for p in pkts), [1, 2])
        self.assertIn(f"Flow rule #{specific} destroyed", f.tp.cmd(f"flow destroy {PORT} rule {specific}"))
        pkts = f.rx([bytes(frame(f.mac, dport=5000))])
        self.assertEqual([p["queue"] for p in pkts], [1])
        f.tp.cmd(f"flow flush {PORT}")
        self.assertNotRegex(f.tp.cmd(f"flow list {PORT}"), r"(?m)^\d+\s+0\s+\d")


class FlowErrors(unittest.TestCase):
    """Every refused rule names the reason (testpmd prints the rte_flow_error)."""

    CASES = [
        ("egress pattern eth / end actions drop / end", "egress rules are not supported"),
        ("ingress group 1 pattern eth / end actions drop / end", "only group 0 is supported"),
        ("ingress pattern eth / ipv4 ttl is 5 / end actions drop / end", "IPv4 mask on TTL is not supported"),
        ("ingress pattern eth / ipv4 / tcp flags is 2 / end actions drop / end", "TCP mask on flags is not supported"),
        ("ingress pattern eth / ipv6 hop is 3 / end actions drop / end", "IPv6 mask on hop limit is not supported"),
        ("ingress pattern eth / ipv4 / udp / end actions queue index 20 / end", "queue 20 does not exist"),
        ("ingress pattern eth / udp / end actions drop / end", "UDP item needs an IPV4 or IPV6 item before it"),
        ("ingress pattern eth / ipv4 / vlan / end actions drop / end", "VLAN item out of place"),
        ("ingress pattern eth / ipv4 src spec 10.0.0.1 src last 10.0.0.9 / end actions drop / end",
         "ranges (last) are not supported"),
        ("ingress pattern eth / ipv4 / end actions drop / mark id 1 / end", "MARK cannot go with DROP"),
        ("ingress pattern eth / ipv4 / end actions queue index 1 / drop / end",
         "only one of QUEUE, RSS and DROP per rule"),
        ("ingress pattern eth / ipv4 / end actions rss queues 0 1 end key_len 16 / end",
         "RSS key of 16 bytes"),
        ("ingress pattern eth / ipv4 / end actions passthru / end", "action type"),
        ("ingress pattern eth / ipv4 / sctp / end actions drop / end", "pattern item type"),
    ]

    def test_unsupported_rules_are_refused_precisely(self):
        rig = self.enterContext(TapRig(1, app_args=["--rxq=4", "--txq=4"]))
        for rule, message in self.CASES:
            for verb in ("validate", "create"):
                out = rig.tp.cmd(f"flow {verb} {PORT} {rule}")
                self.assertIn(message, out, f"flow {verb} {rule}")
                self.assertNotIn("created", out)
        self.assertNotRegex(rig.tp.cmd(f"flow list {PORT}"), r"(?m)^\d+\s+0\s+\d")

    def test_table_full(self):
        rig = self.enterContext(TapRig(1))
        for i in range(64):
            out = rig.tp.cmd(f"flow create {PORT} ingress pattern eth / ipv4 / udp dst is {100 + i} / end "
                             "actions drop / end")
            self.assertIn("created", out, f"rule {i}")
        out = rig.tp.cmd(f"flow create {PORT} ingress pattern eth / ipv4 / udp dst is 99 / end actions drop / end")
        self.assertIn("flow rule table is full", out)
        rig.tp.cmd(f"flow destroy {PORT} rule 10")
        self.assertIn("created", rig.tp.cmd(f"flow create {PORT} ingress pattern eth / end actions drop / end"))


if __name__ == "__main__":
    unittest.main()
