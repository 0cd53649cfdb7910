"""SR-IOV rigs: cna-adapterd with a one-port adapter, PF 0 driven by a
testpmd of its own with VFs enabled (vfs=N), and VFs driven by testpmds in
host processes (test_sriov) or in a QEMU guest (test_vm, harness.guest).

    with Rig(vfs=2, vf_list=(1,)) as rig:      # VF 1 in a host testpmd
        rig.vf[1].cmd(...)
        rig.vf_info(0)                         # the PF's telemetry on VF 0
"""
import json
import re
import subprocess
import time

from harness.daemon import AdapterDaemon, adapterctl
from harness.testpmd import Netns, TestPmd, TestPmdError, unique_tag, wait_for_iface

TELEMETRY = "/usr/bin/dpdk-telemetry.py"
KERNEL_ADDR = "10.79.0.1/24"
VF_IP = "10.79.0.2"  # any address: icmpecho answers for all of them


def wire_tx_frames(socket, port):
    out = adapterctl(socket, "counters", str(port))
    return int(re.search(r"wire_tx_frames (\d+)", out).group(1))


class Rig:
    """A daemon with a one-port adapter on a loopback wire, PF 0 with `vfs` VFs in a
    testpmd of its own (its devargs and `pf_devargs`), and one testpmd per VF in
    `vf_list`."""

    def __init__(self, vfs=2, vf_list=(0, 1), pf_args=(), vf_args=(), tap=False, pf_devargs=""):
        self.tag = unique_tag()
        self.vfs = vfs
        self.vf_list = vf_list
        self.pf_args = list(pf_args)
        self.pf_devargs = f",{pf_devargs}" if pf_devargs else ""
        self.vf_args = list(vf_args)
        # With tap, the port's wire is a TAP interface in a namespace of its
        # own: the kernel is the link partner.
        self.ifname = f"cnv{self.tag}"[:15] if tap else None
        self.ns = None
        self.daemon = AdapterDaemon(["--ports", "1"] + (["--wire", f"tap:{self.ifname}"] if tap else []))
        self.pf = None
        self.vf = {}

    def __enter__(self):
        self.daemon.start()
        try:
            if self.ifname:
                wait_for_iface(self.ifname)
                self.ns = Netns()
                self.ns.adopt(self.ifname, addr=KERNEL_ADDR)
            self.pf = self.start_pf("pf", self.pf_devargs)
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
        if self.ns is not None:
            self.ns.delete()

    def memory(self, who):
        return ["--no-huge", "-m", "256", "--file-prefix", f"{self.tag}{who}"]

    def start_pf(self, who, devargs=""):
        tp = TestPmd([f"net_cna0,daemon={self.daemon.socket},pf=0,vfs={self.vfs}{devargs}"], app_args=self.pf_args,
                     memory=self.memory(who))
        tp.start()
        return tp

    def reset_vf(self, vf):
        """`port reset` of a VF's port, as after its PF went: stopped, reset
        (acquired from the PF there is now), started with its link up."""
        tp = self.vf[vf]
        tp.cmd("port stop 0")
        out = tp.cmd("port reset 0")
        if "reset: acquired the VF anew" not in out or "Failed to reset port" in out:
            raise TestPmdError(f"VF {vf}'s port reset:\n{out}")
        tp.cmd("port start 0")
        wait_for(lambda: tp.link(0)[0] == "up", what=f"VF {vf}'s link after its reset")

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

    def set(self, what, vf, value):
        """A /cna/vf/set_* command; its status (0 or -errno)."""
        return self.telemetry(f"/cna/vf/set_{what},0,{vf},{value}")[0]["status"]


def settled(read, quiet=0.3, timeout=10.0, what="a reading"):
    """read()'s value once it held still for quiet seconds: counters that
    move until the adapter has taken what was left on a ring, on a machine
    that may be slow to schedule its engine."""
    deadline = time.monotonic() + timeout
    value = read()
    while True:
        time.sleep(quiet)
        now = read()
        if now == value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} still moving after {timeout} s: {value} then {now}")
        value = now


def wait_for(cond, timeout=5.0, what="condition"):
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)
