"""Open vSwitch with its DPDK datapath (Debian's openvswitch-switch-dpdk, run
as it is) from a directory of its own: ovsdb-server, and ovs-vswitchd-dpdk
with net_cna loaded (-d) and the vdevs given probed at its EAL's start.

    with Ovs(["net_cna0,daemon=...,pf=0,vfs=2,representor=[0-1]"]) as ovs:
        ovs.vsctl("add-br", "br0", "--", "set", "bridge", "br0", "datapath_type=netdev")
        ovs.appctl("dpctl/dump-flows", "-m", "type=offloaded")
"""
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time

from harness.testpmd import TestPmdError, pmd_path

VSWITCHD = "/usr/lib/openvswitch-switch-dpdk/ovs-vswitchd-dpdk"
SCHEMA = "/usr/share/openvswitch/vswitch.ovsschema"


def available():
    return os.path.exists(VSWITCHD) and os.path.exists(SCHEMA)


class Ovs:
    def __init__(self, vdevs, hw_offload=True, build=None, pmd_cpus="0x2"):
        self.dir = tempfile.mkdtemp(prefix="cna-ovs-")
        self.db = f"unix:{self.dir}/db.sock"
        self.env = dict(os.environ, OVS_RUNDIR=self.dir, OVS_DBDIR=self.dir, OVS_LOGDIR=self.dir,
                        OVS_SYSCONFDIR=self.dir)
        self.env.pop("LD_PRELOAD", None)  # OVS is not under the suite's sanitizers
        eal = ["-d", pmd_path(build), "--no-pci"] + [f"--vdev={v}" for v in vdevs]
        self.config = {"dpdk-init": "true", "hw-offload": "true" if hw_offload else "false",
                       "dpdk-extra": " ".join(eal), "dpdk-socket-mem": "256", "dpdk-lcore-mask": "0x1",
                       "pmd-cpu-mask": pmd_cpus}
        self.started = []

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()

    def run(self, *argv, check=True, timeout=30):
        proc = subprocess.run(list(argv), capture_output=True, text=True, timeout=timeout, env=self.env)
        if check and proc.returncode != 0:
            raise TestPmdError(f"{' '.join(argv)} failed ({proc.returncode}):\n{proc.stdout}{proc.stderr}\n"
                               f"ovs-vswitchd's log:\n{self.log()[-4000:]}")
        return proc.stdout

    def vsctl(self, *args, wait=True):
        return self.run("ovs-vsctl", f"--db={self.db}", *([] if wait else ["--no-wait"]), *args)

    def appctl(self, *args):
        return self.run("ovs-appctl", "-t", self.control_socket(), *args)

    def ofctl(self, *args):
        return self.run("ovs-ofctl", *args)

    def control_socket(self):
        with open(os.path.join(self.dir, "vswitchd.pid")) as f:
            pid = f.read().strip()
        return os.path.join(self.dir, f"ovs-vswitchd-dpdk.{pid}.ctl")

    def log(self):
        try:
            with open(os.path.join(self.dir, "vswitchd.log")) as f:
                return f.read()
        except OSError:
            return ""

    def start(self, timeout=60):
        self.run("ovsdb-tool", "create", os.path.join(self.dir, "conf.db"), SCHEMA)
        self.run("ovsdb-server", os.path.join(self.dir, "conf.db"), f"--remote=punix:{self.dir}/db.sock",
                 f"--pidfile={self.dir}/ovsdb.pid", "--detach", f"--log-file={self.dir}/ovsdb.log")
        self.started.append("ovsdb.pid")
        self.vsctl("init", wait=False)
        self.vsctl("set", "Open_vSwitch", ".", *[f"other_config:{k}={v}" for k, v in self.config.items()], wait=False)
        self.run(VSWITCHD, self.db, f"--pidfile={self.dir}/vswitchd.pid", "--detach",
                 f"--log-file={self.dir}/vswitchd.log", timeout=timeout)
        self.started.append("vswitchd.pid")
        deadline = time.monotonic() + timeout
        while "DPDK Enabled - initialized" not in self.log():
            if time.monotonic() > deadline or "EAL: Error" in self.log():
                raise TestPmdError(f"ovs-vswitchd did not bring DPDK up:\n{self.log()[-4000:]}")
            time.sleep(0.1)

    def stop(self):
        for pidfile in reversed(self.started):
            try:
                with open(os.path.join(self.dir, pidfile)) as f:
                    pid = int(f.read())
                os.kill(pid, signal.SIGTERM)
                for _ in range(100):
                    os.kill(pid, 0)
                    time.sleep(0.1)
                os.kill(pid, signal.SIGKILL)
            except (OSError, ValueError):
                pass
        self.started = []
        shutil.rmtree(self.dir, ignore_errors=True)

    def add_switch_bridge(self, pf="net_cna0", representors=2):
        """A bridge br0 of the DPDK datapath: the PF as its port `uplink`,
        VF n's representor as `rep<n>`."""
        self.vsctl("add-br", "br0", "--", "set", "bridge", "br0", "datapath_type=netdev")
        ports = [("uplink", pf)] + [(f"rep{n}", f"{pf},representor=vf{n}") for n in range(representors)]
        for name, devargs in ports:
            self.vsctl("add-port", "br0", name, "--", "set", "Interface", name, "type=dpdk",
                       f"options:dpdk-devargs={devargs}")

    def flows(self, kind="offloaded"):
        """The datapath's flows of a kind (offloaded, ovs, all): one dict each,
        its match and actions text and its statistics."""
        out = self.appctl("dpctl/dump-flows", "-m", f"type={kind}")
        flows = []
        for line in out.splitlines():
            m = re.search(r"packets:(\d+), bytes:(\d+)", line)
            if m is None:
                continue
            flows.append({"text": line, "packets": int(m.group(1)), "bytes": int(m.group(2)),
                          "actions": re.search(r"actions:(\S+)", line).group(1).rstrip(",")})
        return flows

    def rx_packets(self, port):
        """A port's Rx count now (the datapath asks the device; the
        database's statistics are seconds old)."""
        out = self.appctl("dpctl/show", "-s")
        m = re.search(rf"port \d+: {re.escape(port)} .*\n\s*RX packets:(\d+)", out)
        if m is None:
            raise TestPmdError(f"no port {port} in dpctl/show:\n{out}")
        return int(m.group(1))
