"""The port switch in switchdev mode, driven by Debian's unmodified testpmd:
PF 0 of cna-adapterd with two VFs and their representors
(net_cna0,...,vfs=2,representor=[0-1]) in one testpmd, each VF in a testpmd
of its own. One switch domain; what no rule takes reaches the
representors; rte_flow transfer rules (flow validate/create/query/destroy
... transfer) for every item and action, the frames' paths checked by
testpmd's counters and, on a TAP wire, by the kernel and tshark; a VF
killed under rules pointing at it; a full table; the representors closed
and the VFs switching by MAC again, their processes untouched."""
import os
import re
import signal
import subprocess
import time
import unittest

from harness.sriov import Rig, settled, wait_for, wire_tx_frames
from harness.testpmd import forward_stats, frame, port_mac, xstats

REPRESENTORS = "representor=[0-1]"


def switch_info(out):
    return (re.search(r"Switch name: (.*)", out).group(1).strip(), int(re.search(r"Switch domain Id: (\d+)", out).group(1)),
            int(re.search(r"Switch Port Id: (\d+)", out).group(1)))


def create(tp, rule):
    """`flow create <rule>`: the rule's number."""
    out = tp.cmd(f"flow create {rule}")
    m = re.search(r"Flow rule #(\d+) created", out)
    if m is None:
        raise AssertionError(f"flow create {rule}:\n{out}")
    return int(m.group(1))


def hits(tp, port, rule):
    out = tp.cmd(f"flow query {port} {rule} count")
    m = re.search(r"hits: (\d+)", out)
    if m is None:
        raise AssertionError(f"flow query {port} {rule} count:\n{out}")
    return int(m.group(1))


def refused(tp, rule):
    """The PMD's message for a rule `flow validate` refuses."""
    out = tp.cmd(f"flow validate {rule}")
    m = re.search(r"Caught PMD error type \d+ \(([^)]*)\): (?:cause: \S+, )?(.*?): (?:Invalid argument|No space)", out)
    if m is None:
        raise AssertionError(f"flow validate {rule} was not refused:\n{out}")
    return m.group(1), m.group(2)


def arrived(stats):
    """What reached a port's Rx, received or dropped there for want of
    buffers: what the switch delivered to it."""
    return stats["RX-packets"] + stats["RX-dropped"]


def send_from(tp, peer_mac, seconds):
    """txonly from a VF's testpmd to peer_mac for a while: its TX count."""
    tp.cmd("set fwd txonly")
    tp.cmd(f"set eth-peer 0 {peer_mac}")
    tp.cmd("start")
    time.sleep(seconds)
    return forward_stats(tp.cmd("stop"))[0]["TX-packets"]


def vf0_to_vf1(rig, macs, seconds=0.5):
    """txonly from VF 0 to VF 1's MAC, VF 1 receiving: (what VF 0 sent, what
    reached VF 1)."""
    rig.vf[1].cmd("set fwd rxonly")
    rig.vf[1].cmd("start")
    sent = send_from(rig.vf[0], macs[1], seconds)
    time.sleep(0.3)
    return sent, arrived(forward_stats(rig.vf[1].cmd("stop"))[0])


class Domain(unittest.TestCase):
    def test_the_pf_its_representors_and_its_vfs_are_one_switch_domain(self):
        with Rig(pf_devargs=REPRESENTORS) as rig:
            pf = {p: switch_info(rig.pf.cmd(f"show port info {p}")) for p in (0, 1, 2)}
            names = {p: re.search(r"Device name: (\S+)", rig.pf.cmd(f"show port info {p}")).group(1) for p in (1, 2)}
            self.assertEqual(names, {1: "net_cna0_representor_vf0", 2: "net_cna0_representor_vf1"})
            self.assertEqual({p: info[2] for p, info in pf.items()}, {0: 0, 1: 1, 2: 2},
                             "switch ports: the uplink 0, VF n's representor n + 1")
            self.assertEqual(len({info[:2] for info in pf.values()}), 1, f"one switch domain: {pf}")
            for vf in (0, 1):
                info = switch_info(rig.vf[vf].cmd("show port info 0"))
                self.assertEqual(info[0], pf[0][0], "the VF's process names the same switch")
                self.assertEqual(info[2], vf + 9, "a VF's own switch port: 1 + 8 VFs' representors + n")
            self.assertRegex(rig.pf.cmd("show port info 1"), r"Devargs: .*representor=\[0-1\]")


class MissPath(unittest.TestCase):
    def test_what_no_rule_takes_reaches_the_representors_and_their_tx_the_vfs(self):
        with Rig(pf_devargs=REPRESENTORS) as rig:
            macs = {vf: port_mac(rig.vf[vf], 0) for vf in (0, 1)}
            before = wire_tx_frames(rig.daemon.socket, 0)
            rig.pf.cmd("set fwd rxonly")
            rig.pf.cmd("start")
            rig.vf[1].cmd("set fwd rxonly")
            rig.vf[1].cmd("start")
            sent = send_from(rig.vf[0], macs[1], 1.0)
            time.sleep(0.3)
            pf = forward_stats(rig.pf.cmd("stop"))
            vf1 = forward_stats(rig.vf[1].cmd("stop"))[0]
            self.assertGreater(sent, 1000)
            self.assertGreaterEqual(arrived(pf[1]), sent * 9 // 10,
                                    "VF 0's frames, addressed to VF 1, to VF 0's representor")
            self.assertGreater(pf[1]["RX-packets"], 1000)
            self.assertEqual(arrived(pf[2]), 0)
            self.assertEqual(arrived(vf1), 0, "no MAC switching in switchdev mode")
            self.assertEqual(wire_tx_frames(rig.daemon.socket, 0), before, "nothing left the adapter")
            # The representor's Tx goes to its VF.
            rig.vf[1].cmd("start")
            rig.pf.cmd("set portlist 2")
            rig.pf.cmd("set fwd txonly")
            rig.pf.cmd(f"set eth-peer 2 {macs[1]}")
            rig.pf.cmd("start")
            time.sleep(1.0)
            rep = forward_stats(rig.pf.cmd("stop"))[2]
            time.sleep(0.3)
            vf1 = forward_stats(rig.vf[1].cmd("stop"))[0]
            self.assertGreater(rep["TX-packets"], 1000)
            self.assertGreaterEqual(arrived(vf1), rep["TX-packets"] * 9 // 10)
            self.assertGreater(vf1["RX-packets"], 1000)
            misses = xstats(rig.pf, 0)["switch_misses"]
            self.assertGreaterEqual(misses, sent + rep["TX-packets"] - 64)


class Rules(unittest.TestCase):
    def test_every_item_and_action_is_validated_created_and_destroyed(self):
        items = [
            "eth / end",
            "represented_port ethdev_port_id is 1 / eth / end",
            "port_representor port_id is 0 / eth type is 0x0806 / end",
            "eth dst is 02:00:00:00:00:01 / vlan vid is 42 / ipv4 / udp dst is 4789 / end",
            "eth / ipv4 src is 10.0.0.1 dst is 10.0.0.2 / tcp dst is 80 / end",
            "eth / ipv6 dst is 2001:db8::1 / udp src is 53 / end",
            "eth / ipv4 / icmp type is 8 code is 0 / end",
        ]
        actions = [
            "count / represented_port ethdev_port_id 2 / end",
            "count / port_representor port_id 1 / end",
            "count / drop / end",
            "of_pop_vlan / represented_port ethdev_port_id 1 / end",
            "of_push_vlan ethertype 0x8100 / of_set_vlan_vid vlan_vid 42 / of_set_vlan_pcp vlan_pcp 3 / "
            "represented_port ethdev_port_id 0 / end",
            "set_mac_src mac_addr 02:aa:00:00:00:01 / set_mac_dst mac_addr 02:aa:00:00:00:02 / "
            "represented_port ethdev_port_id 2 / end",
        ]
        ip_actions = [
            "set_ipv4_src ipv4_addr 192.0.2.1 / set_ipv4_dst ipv4_addr 192.0.2.2 / dec_ttl / "
            "represented_port ethdev_port_id 2 / end",
            "set_ttl ttl_value 9 / port_representor port_id 2 / end",
        ]
        with Rig(vf_list=(), pf_devargs=REPRESENTORS) as rig:
            made = {}
            for port in (0, 1, 2):
                for item in items:
                    for action in actions + (ip_actions if "ipv4" in item else []):
                        if port == 0 and "port_id 0" in action and item.startswith("eth"):
                            continue  # the wire back to the wire: refused below
                        rule = f"{port} transfer pattern {item} actions {action}"
                        self.assertRegex(rig.pf.cmd(f"flow validate {rule}"), r"Flow rule validated", rule)
                        made.setdefault(port, []).append(create(rig.pf, rule))
            for port, rules in made.items():
                out = rig.pf.cmd(f"flow list {port}")
                self.assertEqual(len(re.findall(r"^\d+\s+0\s+0\s+--t", out, re.M)), len(rules), out)
                rig.pf.cmd(f"flow destroy {port} " + " ".join(f"rule {r}" for r in rules[:3]))
                self.assertEqual(len(re.findall(r"^\d+\s+0\s+0\s+--t", rig.pf.cmd(f"flow list {port}"), re.M)),
                                 len(rules) - 3)
                self.assertNotIn("Caught", rig.pf.cmd(f"flow flush {port}"))
                self.assertNotRegex(rig.pf.cmd(f"flow list {port}"), r"--t")
            # Refusals, each with its cause, at validate.
            cases = {
                "0 transfer pattern eth / end actions represented_port ethdev_port_id 0 / end":
                    ("specific action", "frames from the wire cannot go back out of it"),
                "1 transfer pattern eth / end actions count / end":
                    ("number of actions", "a transfer rule needs a fate"),
                "1 transfer pattern eth / end actions drop / represented_port ethdev_port_id 0 / end":
                    ("specific action", "one fate per rule"),
                "1 transfer pattern eth / end actions set_ipv4_src ipv4_addr 1.2.3.4 / drop / end":
                    ("specific action", "SET_IPV4_SRC needs an IPV4 item in the pattern"),
                "1 transfer pattern eth / ipv4 / end actions of_set_vlan_vid vlan_vid 3 / of_push_vlan ethertype "
                "0x8100 / represented_port ethdev_port_id 0 / end":
                    ("specific action", "OF_PUSH_VLAN after OF_SET_VLAN_VID/PCP"),
                "1 transfer pattern eth / ipv4 / tcp flags is 2 / end actions drop / end": None,
                "1 transfer pattern eth / ipv4 / udp / end actions represented_port ethdev_port_id 9 / end":
                    ("action configuration", "port 9 is not in this switch domain"),
                "1 transfer group 1 pattern eth / end actions drop / end":
                    ("group field", "group 1: only group 0 is supported"),
                "1 transfer pattern eth / ipv6 / icmp / end actions drop / end":
                    ("specific pattern item", "ICMP over IPv6 is ICMPv6"),
                "1 ingress pattern eth / end actions drop / end":
                    ("transfer field", "a representor takes transfer rules only"),
                "0 ingress pattern eth / ipv4 ttl is 3 / end actions drop / end":
                    ("item specification mask", "IPv4 mask on TTL is not supported (transfer rules match it)"),
            }
            for rule, expected in cases.items():
                if expected is None:
                    self.assertRegex(rig.pf.cmd(f"flow validate {rule}"), r"Flow rule validated", rule)
                else:
                    cause, message = refused(rig.pf, rule)
                    self.assertEqual(cause, expected[0], rule)
                    self.assertIn(expected[1], message, rule)

    @unittest.skipUnless(os.geteuid() == 0 and os.path.exists("/dev/net/tun"), "needs root and /dev/net/tun")
    def test_echoes_from_the_wire_reach_a_vf_untagged_and_come_back_tagged_by_rules(self):
        """Echo requests tagged with VLAN 42 from the TAP wire's kernel end;
        VF 0 (testpmd's icmpecho) knows nothing of the VLAN: one rule pops
        the tag on the way in, another pushes it on the way out."""
        from scapy.all import ICMP, Dot1Q, Ether
        with Rig(vf_list=(0,), tap=True, pf_devargs=REPRESENTORS) as rig:
            vf_mac = port_mac(rig.vf[0], 0)
            kernel_mac = rig.ns.mac(rig.ifname)
            rig.ns.bind(rig.ifname)
            wait_for(lambda: rig.vf[0].link(0)[0] == "up", what="the VF's link")
            rig.vf[0].cmd("set fwd icmpecho")
            rig.vf[0].cmd("start")
            requests = [bytes(frame(vf_mac, kernel_mac, l4="icmp", vlan=42, saddr="10.79.42.1",
                                    daddr="10.79.42.2")) for _ in range(3)]
            send = [(rig.ifname, f) for f in requests]
            self.assertEqual(rig.ns.io(send=send, capture=[rig.ifname], timeout=1.0), [],
                             "no rule: the tagged requests go to the uplink's representor")
            into = create(rig.pf, "0 transfer pattern eth / vlan vid is 42 / ipv4 / icmp type is 8 / end "
                                  "actions count / of_pop_vlan / represented_port ethdev_port_id 1 / end")
            out_of = create(rig.pf, "1 transfer pattern eth / ipv4 / icmp type is 0 / end actions count / "
                                    "of_push_vlan ethertype 0x8100 / of_set_vlan_vid vlan_vid 42 / "
                                    "represented_port ethdev_port_id 0 / end")
            replies = [Ether(f) for _, f in rig.ns.io(send=send, capture=[rig.ifname], expect=3, timeout=3.0)]
            self.assertEqual(len(replies), 3, "an echo reply for each request")
            for reply in replies:
                self.assertEqual(reply.src.lower(), vf_mac)
                self.assertIn(Dot1Q, reply, "tagged on the way out")
                self.assertEqual(reply[Dot1Q].vlan, 42)
                self.assertEqual(reply[ICMP].type, 0)
            self.assertEqual(hits(rig.pf, 0, into), 3)
            self.assertEqual(hits(rig.pf, 1, out_of), 3)
            rig.pf.cmd(f"flow destroy 1 rule {out_of}")
            self.assertEqual(rig.ns.io(send=send, capture=[rig.ifname], timeout=1.0), [],
                             "the way back gone: the replies reach VF 0's representor")
            self.assertEqual(hits(rig.pf, 0, into), 6)
            rig.vf[0].cmd("stop")

    @unittest.skipUnless(os.geteuid() == 0 and os.path.exists("/dev/net/tun"), "needs root and /dev/net/tun")
    def test_a_rule_rewrites_a_vfs_frames_on_their_way_to_the_wire_as_tshark_sees_them(self):
        with Rig(vf_list=(1,), tap=True, pf_devargs=REPRESENTORS) as rig:
            rule = create(rig.pf, "2 transfer pattern eth / ipv4 / udp dst is 9 / end actions count / "
                                  "set_mac_src mac_addr 02:aa:bb:cc:dd:01 / set_ipv4_src ipv4_addr 192.0.2.77 / "
                                  "set_tp_dst port 4242 / dec_ttl / of_push_vlan ethertype 0x8100 / "
                                  "of_set_vlan_vid vlan_vid 7 / represented_port ethdev_port_id 0 / end")
            drop = create(rig.pf, "2 transfer pattern eth / ipv4 / udp dst is 9 / end actions count / drop / end")
            env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
            tshark = rig.ns.popen("tshark", "-l", "-i", rig.ifname, "-c", "3", "-a", "duration:20", "-o",
                                  "ip.check_checksum:TRUE", "-f", "ether src 02:aa:bb:cc:dd:01", "-T", "fields",
                                  "-e", "vlan.id", "-e", "ip.src", "-e", "ip.ttl", "-e", "udp.dstport", "-e",
                                  "ip.checksum.status", stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                  env=env)
            try:
                time.sleep(1.5)  # tshark's capture open
                sent = send_from(rig.vf[1], "02:11:22:33:44:55", 1.0)
                out, err = tshark.communicate(timeout=40)
            finally:
                if tshark.poll() is None:
                    tshark.kill()
            frames = [line.split("\t") for line in out.splitlines() if line.strip()]
            self.assertEqual(len(frames), 3, f"tshark saw no rewritten frame:\n{out}{err}")
            for frame in frames:
                self.assertEqual(frame, ["7", "192.0.2.77", "63", "4242", "1"],
                                 "tagged 7, from 192.0.2.77, TTL 64 - 1, to 4242, a good IPv4 checksum")
            counted = settled(lambda: hits(rig.pf, 2, rule), what="the rule's count")
            self.assertGreaterEqual(counted, sent * 9 // 10)
            self.assertEqual(hits(rig.pf, 2, drop), 0, "the older rule of equal priority matched first")
            # The rule gone, the next one of the same match drops.
            rig.pf.cmd(f"flow destroy 2 rule {rule}")
            before = wire_tx_frames(rig.daemon.socket, 0)
            sent = send_from(rig.vf[1], "02:11:22:33:44:55", 0.5)
            dropped = settled(lambda: hits(rig.pf, 2, drop), what="the drop rule's count")
            self.assertGreaterEqual(dropped, sent * 9 // 10)
            self.assertEqual(xstats(rig.pf, 0)["switch_drop_packets"], dropped)
            self.assertLessEqual(wire_tx_frames(rig.daemon.socket, 0) - before, 8, "no frame of VF 1 on the wire")


class Faults(unittest.TestCase):
    def test_a_vf_killed_under_rules_pointing_at_it_comes_back_to_them(self):
        with Rig(pf_devargs=REPRESENTORS) as rig:
            macs = {vf: port_mac(rig.vf[vf], 0) for vf in (0, 1)}
            rule = create(rig.pf, "1 transfer pattern eth / end actions count / represented_port ethdev_port_id 2 / end")
            sent, got = vf0_to_vf1(rig, macs)
            self.assertGreaterEqual(got, sent * 9 // 10)
            os.kill(rig.vf[1].child.pid, signal.SIGKILL)
            rig.vf[1].close()
            wait_for(lambda: "pf0 vf1 function level reset" in rig.daemon.output(), what="the VF's FLR")
            wait_for(lambda: rig.vf_info(1)["acquired"] == 0, what="the PF forgetting the dead VF")
            unreachable = xstats(rig.pf, 0)["switch_unreachable_packets"]
            sent = send_from(rig.vf[0], macs[1], 0.5)
            self.assertGreaterEqual(xstats(rig.pf, 0)["switch_unreachable_packets"] - unreachable, sent * 9 // 10,
                                    "the rule stays; its frames have nowhere to go, and are counted")
            rig.vf[1] = rig.start_vf(1)
            before = hits(rig.pf, 1, rule)
            sent, got = vf0_to_vf1(rig, macs)
            self.assertGreaterEqual(got, sent * 9 // 10, "a new process took the VF: the rule works again")
            self.assertGreaterEqual(hits(rig.pf, 1, rule) - before, sent * 9 // 10)

    def test_the_pf_quitting_leaves_its_vfs_forwarding_by_mac_until_a_new_pf(self):
        """The PF's testpmd quits with rules and representors: the switch
        returns to MAC switching, the VFs' processes forward on, to each other
        and to the wire, with their link up and no reset; their configuration
        waits (EAGAIN). A new PF's driver disables them: each VF asks for a
        reset and, reset, forwards again."""
        with Rig(pf_devargs=REPRESENTORS) as rig:
            macs = {vf: port_mac(rig.vf[vf], 0) for vf in (0, 1)}
            create(rig.pf, "1 transfer pattern eth / end actions drop / end")
            out = rig.pf.quit()
            self.assertRegex(out, r"2 VFs stay enabled past this driver, 2 of them held by their drivers")
            wait_for(lambda: "pf0 function level reset; its driver had unloaded: its 2 VF(s) stay enabled"
                     in rig.daemon.output(), what="the PF's detach")
            for vf in (0, 1):
                rig.vf[vf].collect(r"the PF's driver unloaded leaving the VF enabled", timeout=3)
            sent, got = vf0_to_vf1(rig, macs)
            self.assertGreaterEqual(got, sent * 9 // 10, "VF 0 to VF 1 by MAC: the drop rule went with its PF")
            before = wire_tx_frames(rig.daemon.socket, 0)
            sent = send_from(rig.vf[0], "02:00:5e:99:00:01", 0.5)
            self.assertGreaterEqual(wire_tx_frames(rig.daemon.socket, 0) - before, sent * 9 // 10, "and to the wire")
            for vf in (0, 1):
                self.assertEqual(rig.vf[vf].link(0)[0], "up", "not cut off")
                self.assertNotRegex(rig.vf[vf].collect(r"reset event", timeout=0.5), r"reset event")
            self.assertRegex(rig.vf[0].cmd("mac_addr add 0 02:00:5e:99:00:02"), r"Resource temporarily unavailable")

            rig.pf = rig.start_pf("pf2")
            for vf in (0, 1):
                rig.vf[vf].collect(r"Port 0: reset event", timeout=5)
                rig.reset_vf(vf)
            sent, got = vf0_to_vf1(rig, macs)
            self.assertGreaterEqual(got, sent * 9 // 10, "reset, each VF acquired from the new PF")

    def test_a_full_table_says_so(self):
        with Rig(vf_list=(), pf_devargs=REPRESENTORS + ",switch_rules=4") as rig:
            for _ in range(4):
                create(rig.pf, "1 transfer pattern eth / end actions drop / end")
            out = rig.pf.cmd("flow create 1 transfer pattern eth / end actions drop / end")
            self.assertRegex(out, r"the port switch's rule table is full")
            self.assertRegex(rig.pf.cmd("flow validate 1 transfer pattern eth / end actions drop / end"),
                             r"Flow rule validated", "a valid rule: only creating it needs room")

    def test_closing_the_representors_leaves_the_vfs_switching_by_mac(self):
        with Rig(pf_devargs=REPRESENTORS) as rig:
            macs = {vf: port_mac(rig.vf[vf], 0) for vf in (0, 1)}
            create(rig.pf, "1 transfer pattern eth / end actions drop / end")
            for port in (1, 2):
                rig.pf.cmd(f"port stop {port}")
                self.assertRegex(rig.pf.cmd(f"port close {port}"), rf"Port {port} is closed")
            sent, got = vf0_to_vf1(rig, macs)
            self.assertGreaterEqual(got, sent * 9 // 10,
                                    "legacy mode: VF 0 to VF 1 by MAC, both VF processes as they were")
            self.assertRegex(rig.pf.cmd("flow validate 0 transfer pattern eth / end actions drop / end"),
                             r"switchdev mode")


if __name__ == "__main__":
    unittest.main()
