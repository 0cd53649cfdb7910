"""SR-IOV: a net_cna PF with VFs (vfs=N) on cna-adapterd's adapter, each VF
driven by Debian's unmodified testpmd in a process of its own through
net_cna_vf. Frames between the functions of a port are switched inside the
adapter; the PF's policy (forced MAC, port VLAN, anti-spoofing, trust, link
state) is set through the PMD's telemetry commands on the PF's testpmd and
seen by the VFs; a VF killed mid-traffic is reset and acquired anew."""
import json
import re
import subprocess
import time
import unittest

from harness.daemon import AdapterDaemon, adapterctl
from harness.testpmd import TestPmd, TestPmdError, forward_stats, port_mac, unique_tag

TELEMETRY = "/usr/bin/dpdk-telemetry.py"


def wire_tx_frames(socket, port):
    out = adapterctl(socket, "counters", str(port))
    return int(re.search(r"wire_tx_frames (\d+)", out).group(1))


class Rig:
    """A daemon with a one-port adapter on a loopback wire, PF 0 with `vfs` VFs in a
    testpmd of its own, and one testpmd per VF in `vf_list`."""

    def __init__(self, vfs=2, vf_list=(0, 1), pf_args=(), vf_args=()):
        self.tag = unique_tag()
        self.vfs = vfs
        self.vf_list = vf_list
        self.pf_args = list(pf_args)
        self.vf_args = list(vf_args)
        self.daemon = AdapterDaemon(["--ports", "1"])
        self.pf = None
        self.vf = {}

    def __enter__(self):
        self.daemon.start()
        try:
            self.pf = TestPmd([f"net_cna0,daemon={self.daemon.socket},pf=0,vfs={self.vfs}"],
                              app_args=self.pf_args, memory=self.memory("pf"))
            self.pf.start()
            for vf in self.vf_list:
                self.vf[vf] = self.start_vf(vf)
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc):
        for tp in list(self.vf.values()) + [self.pf]:
            if tp is not None:
                tp.close()
        self.daemon.stop()

    def memory(self, who):
        return ["--no-huge", "-m", "256", "--file-prefix", f"{self.tag}{who}"]

    def start_vf(self, vf):
        # the VFs' forwarding lcores on different CPUs
        lcores = "0@0,1@1" if vf % 2 == 0 else "0@1,1@0"
        tp = TestPmd([f"net_cna_vf{vf},daemon={self.daemon.socket},pf=0,vf={vf}"], app_args=self.vf_args,
                     memory=self.memory(f"vf{vf}"), lcores=lcores)
        tp.start()
        return tp

    def telemetry(self, *commands):
        """The PF's testpmd answers the PMD's telemetry commands."""
        proc = subprocess.run([TELEMETRY, "-f", f"{self.tag}pf"], input="\n".join(commands) + "\n",
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=60)
        replies = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
        if proc.returncode != 0 or len(replies) != len(commands):
            raise TestPmdError(f"dpdk-telemetry.py ({proc.returncode}):\n{proc.stdout}")
        return [r[c.split(",")[0]] for r, c in zip(replies, commands)]

    def vf_info(self, vf):
        return self.telemetry(f"/cna/vf/info,0,{vf}")[0]


def wait_for(cond, timeout=5.0, what="condition"):
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


class Switching(unittest.TestCase):
    def test_vf_to_vf_traffic_is_switched_inside_the_adapter(self):
        with Rig() as rig:
            macs = {vf: port_mac(rig.vf[vf], 0) for vf in (0, 1)}
            self.assertNotEqual(macs[0], macs[1])
            for vf, peer in ((0, 1), (1, 0)):
                tp = rig.vf[vf]
                tp.cmd("set fwd mac")
                tp.cmd(f"set eth-peer 0 {macs[peer]}")
                self.assertEqual(tp.link(0)[0], "up")
            before = wire_tx_frames(rig.daemon.socket, 0)
            rig.vf[0].cmd("start")
            rig.vf[1].cmd("start tx_first")
            time.sleep(2)
            fwd = {vf: forward_stats(rig.vf[vf].cmd("stop"))[0] for vf in (1, 0)}
            for vf in (0, 1):
                self.assertGreater(fwd[vf]["RX-packets"], 1000, f"VF {vf} received too little")
            self.assertEqual(wire_tx_frames(rig.daemon.socket, 0), before,
                             "frames between VFs of a port never leave the adapter")
            stats = rig.telemetry("/cna/vf/stats,0,0", "/cna/vf/stats,0,1")
            self.assertGreaterEqual(stats[0]["opackets"], fwd[0]["TX-packets"])
            self.assertGreaterEqual(stats[1]["ipackets"], fwd[1]["RX-packets"])
            for vf in (0, 1):
                in_use = rig.vf[vf].mempool_in_use()
                rig.vf[vf].cmd("port stop all")
                self.assertEqual(sum(rig.vf[vf].mempool_in_use().values()), 0,
                                 f"VF {vf}: every mbuf back in its pool after stop (in use while started: {in_use})")
