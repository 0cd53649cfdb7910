"""The VF inside a virtual machine: a QEMU/TCG guest booted by
app/vm/vm_run.py gets a VF of cna-adapterd's adapter as an ivshmem PCI
device; in the guest, dpdk-devbind.py binds it to vfio-pci and Debian's
unmodified testpmd probes it as net_cna_vf (harness.guest). The guest's VF
answers the kernel's pings through the port's TAP wire, exchanges frames with
a VF in a host process inside the adapter, and when the guest is killed
mid-traffic the daemon resets its VF while the host's VF forwards on and a
new guest takes the VF. An ivshmem device without the cna signature is left
alone.

One adapter and one guest serve the module (the probe, the kernel's pings,
the exchange with a host process's VF): a TCG boot is the module's costliest
step. The guest killed mid-traffic is a guest of its own, on a VF of its own,
and the one that takes its VF after it.

Needs root, /dev/net/tun and QEMU (qemu-system-x86, which ./cna test
installs); without them the module is skipped, or fails where CI is set."""
import contextlib
import os
import re
import shlex
import tempfile
import time
import unittest

from harness.daemon import adapterctl
from harness.guest import VF_PCI, GuestTestPmd, function_state, testpmd_argv, unavailable
from harness.sriov import VF_IP, Rig, settled, wait_for, wire_tx_frames
from harness.testpmd import forward_stats, port_mac

# Probe's ivshmem device without the cna signature, beside the VF
PLAIN_SLOT = 0x11
PLAIN_PCI = f"0000:00:{PLAIN_SLOT:02x}.0"
# tx_first's bursts of testpmd's default 32 frames
BURSTS = 4
FRAMES = BURSTS * 32
# The shared guest's VF, the host process's, the killed guest's
GUEST_VF, HOST_VF, DYING_VF = 0, 1, 2
DEBUG = "pmd.net.cna*:debug"

# The module's adapter (a TAP wire in a namespace, a host process on
# HOST_VF) and its guest on GUEST_VF, beside a plain ivshmem device.
RIG = GUEST = None
# What setUpModule started, closed by tearDownModule.
_module = contextlib.ExitStack()


def prelude():
    """What the shared guest runs before its testpmd: dpdk-devbind.py's view
    and binding, and testpmd on the plain device alone."""
    return "; ".join([
        "echo '== status'", "dpdk-devbind.py --status",
        "echo '== ids'", f"cat /sys/bus/pci/devices/{VF_PCI}/vendor /sys/bus/pci/devices/{VF_PCI}/device",
        "echo '== bind'", f"dpdk-devbind.py -b vfio-pci {VF_PCI} {PLAIN_PCI}",
        "echo '== bound'", "dpdk-devbind.py --status",
        # no port: testpmd quits at the end of its stdin
        "echo '== plain alone'",
        shlex.join(testpmd_argv([PLAIN_PCI], [], DEBUG)) + " </dev/null || echo \"testpmd exited with $?\"",
        "echo '== both'"])


def setUpModule():
    global RIG, GUEST, _module
    why = unavailable()
    if why is not None:
        if os.environ.get("CI"):
            raise RuntimeError(f"the VM tests cannot run: {why}; CI is set, where that is a failure, not a skip")
        raise unittest.SkipTest(f"the VM tests cannot run: {why}")
    # Closed here if the set-up fails; else handed to tearDownModule (the
    # stack pop_all() returns holds the callbacks: it must be kept).
    with contextlib.ExitStack() as stack:
        plain = stack.enter_context(tempfile.NamedTemporaryFile(prefix="cna-plain-ivshmem-"))
        plain.truncate(1 << 20)
        plain.flush()
        qemu_args = ["-object", f"memory-backend-file,id=plain,size=1M,mem-path={plain.name},share=on",
                     "-device", f"ivshmem-plain,memdev=plain,addr={PLAIN_SLOT:#x}"]
        RIG = stack.enter_context(Rig(vfs=3, vf_list=(HOST_VF,), tap=True))
        GUEST = stack.enter_context(GuestTestPmd(RIG.daemon.socket, vf=GUEST_VF, allow=(VF_PCI, PLAIN_PCI),
                                                 bind=None, prelude=prelude(), qemu_args=qemu_args,
                                                 log_level=DEBUG))
        stack.callback(GUEST.quit)
        _module = stack.pop_all()


def tearDownModule():
    _module.close()


def drain(tp):
    """Whatever waits in the port's Rx ring (the kernel's ARP, an earlier
    test's frames) received and dropped, so the next run counts from 0."""
    tp.cmd("set fwd rxonly")
    tp.cmd("start")
    time.sleep(0.5)
    tp.cmd("stop")


def section(text, name):
    """The output between the prelude's `== name` marker and the next one."""
    m = re.search(rf"^== {re.escape(name)}\n(.*?)(?=^== |\Z)", text, re.M | re.S)
    if m is None:
        raise AssertionError(f"no section {name!r} in the guest's output:\n{text}")
    return m.group(1)


class Probe(unittest.TestCase):
    def test_devbind_binds_the_vf_and_testpmd_probes_it_but_not_a_device_without_the_signature(self):
        """dpdk-devbind.py lists and binds the VF; testpmd probes it as
        net_cna_vf through VFIO with the MAC the PF gave it, link up; a plain
        ivshmem device (zeroed BAR2, no cna signature) in the same guest,
        bound the same way, is left alone by the driver: alone on testpmd's
        allow list, no port; beside the VF, the VF alone is port 0."""
        out = GUEST.startup_output
        status = section(out, "status")
        self.assertRegex(status, rf"(?m)^{VF_PCI} 'Inter-VM shared memory 1110' .*unused=.*vfio-pci",
                         "dpdk-devbind.py lists the VF among the network devices, bound to no driver")
        self.assertEqual(section(out, "ids").split(), ["0x1af4", "0x1110"], "the VF is an ivshmem device")
        bound = section(out, "bound")
        for dev in (VF_PCI, PLAIN_PCI):
            self.assertRegex(bound, rf"(?m)^{dev} 'Inter-VM shared memory 1110' drv=vfio-pci",
                             f"dpdk-devbind.py bound {dev} to vfio-pci")

        alone = section(out, "plain alone")
        self.assertRegex(alone, rf"Probe PCI driver: net_cna_vf \(1af4:1110\) device: {PLAIN_PCI}",
                         "EAL offers the plain ivshmem device to net_cna_vf (its PCI ids match)")
        self.assertRegex(alone, rf"{PLAIN_PCI}: not a cna VF, left alone")
        self.assertIn("No probed ethernet devices", alone)
        self.assertNotRegex(alone, r"Port 0: [0-9A-F:]{17}")

        both = section(out, "both")
        self.assertRegex(both, rf"Probe PCI driver: net_cna_vf \(1af4:1110\) device: {VF_PCI}")
        self.assertRegex(both, rf"{PLAIN_PCI}: not a cna VF, left alone")
        self.assertRegex(GUEST.cmd("show port summary all"), r"Number of available ports: 1\b")
        info = GUEST.cmd("show port info 0")
        self.assertRegex(info, rf"Device name: {VF_PCI}\n")
        self.assertRegex(info, r"Driver name: net_cna_vf\n", "Debian's testpmd drives the VF by VFIO")
        mac = re.search(r"MAC address: ([0-9A-F:]{17})", info).group(1).lower()
        pf_view = RIG.vf_info(GUEST_VF)
        self.assertEqual(mac, pf_view["mac"].lower(), "the MAC the PF gave the guest's VF")
        self.assertEqual(pf_view["acquired"], 1, "the PF sees the guest's driver holding its VF")
        self.assertEqual(GUEST.link(0)[0], "up")


class KernelPeer(unittest.TestCase):
    def test_the_kernel_pings_the_vm(self):
        """The port's wire is a TAP interface in a network namespace; the
        guest's testpmd answers ARP and echo requests on the VF (icmpecho)."""
        mac = port_mac(GUEST, 0)
        wait_for(lambda: GUEST.link(0)[0] == "up", timeout=10, what="the guest VF's link")
        drain(GUEST)
        RIG.ns.run("ip", "neigh", "flush", "all")  # VF_IP is the guest's here
        GUEST.cmd("set fwd icmpecho")
        GUEST.cmd("start")
        ping = RIG.ns.run("ping", "-c", "3", "-i", "0.2", "-W", "5", VF_IP, check=False, timeout=60)
        self.assertEqual(ping.returncode, 0, ping.stdout + ping.stderr)
        self.assertRegex(ping.stdout, r"\b3 packets transmitted, 3 received, 0% packet loss")
        neigh = RIG.ns.run("ip", "neigh", "show", VF_IP).stdout
        self.assertIn(mac, neigh.lower(), "the answers come from the guest VF's MAC")
        fwd = forward_stats(GUEST.cmd("stop"))[0]
        # 3 echo requests and the ARP request, each answered
        self.assertGreaterEqual(fwd["RX-packets"], 4)
        self.assertEqual(fwd["TX-packets"], fwd["RX-packets"])


class Switching(unittest.TestCase):
    def test_guest_vf_and_host_vf_exchange_frames_inside_the_adapter(self):
        """The guest's VF and the host process's send each other BURSTS
        bursts (tx_first) while the other receives only: each side counts
        exactly those frames, and none of them went out on the port's wire."""
        host = RIG.vf[HOST_VF]
        macs = {"guest": port_mac(GUEST, 0), "host": port_mac(host, 0)}
        self.assertNotEqual(macs["guest"], macs["host"])
        for tp in (GUEST, host):
            self.assertEqual(tp.link(0)[0], "up")
            drain(tp)
        counters = (f"/cna/vf/stats,0,{GUEST_VF}", f"/cna/vf/stats,0,{HOST_VF}")
        before = RIG.telemetry(*counters)
        wire = wire_tx_frames(RIG.daemon.socket, 0)
        for sender, receiver, peer in ((GUEST, host, "host"), (host, GUEST, "guest")):
            with self.subTest(sender="guest" if sender is GUEST else "host"):
                receiver.cmd("set fwd rxonly")
                receiver.cmd("start")
                sender.cmd("set fwd mac")
                sender.cmd(f"set eth-peer 0 {macs[peer]}")
                sender.cmd(f"start tx_first {BURSTS}")
                time.sleep(2)
                sent = forward_stats(sender.cmd("stop"))[0]
                got = forward_stats(receiver.cmd("stop"))[0]
                self.assertEqual(sent["TX-packets"], FRAMES, "the sender's bursts, nothing else forwarded")
                self.assertEqual(sent["RX-packets"], 0)
                self.assertEqual(got["RX-packets"], FRAMES, "the receiver got every frame")
                self.assertEqual(got["TX-packets"], 0)
        self.assertEqual(wire_tx_frames(RIG.daemon.socket, 0), wire, "VF to VF frames never leave the adapter")
        after = RIG.telemetry(*counters)
        for who, b, a in (("guest's", before[0], after[0]), ("host's", before[1], after[1])):
            self.assertEqual((a["opackets"] - b["opackets"], a["ipackets"] - b["ipackets"]), (FRAMES, FRAMES),
                             f"the PF's counters of the {who} VF")
        status = adapterctl(RIG.daemon.socket, "status")
        self.assertRegex(status, rf"(?m)^pf0 vf{HOST_VF}\s+client pid {host.child.pid}$",
                         "a process, no VM, holds the host's VF")
        self.assertRegex(status, rf"(?m)^pf0 vf{GUEST_VF}\s+client pid {GUEST.launcher_pid()} \(a VM\)$")


class Death(unittest.TestCase):
    def test_a_guest_killed_mid_traffic_its_vf_is_reset_and_taken_by_a_new_guest(self):
        """A guest on a VF of its own floods the host process's VF (txonly),
        which answers the kernel's pings (icmpecho) meanwhile; the guest's
        QEMU is killed: the daemon resets its VF and frees it, the host's VF
        answers on, and a new guest takes the VF, with its MAC, and sends
        again."""
        rig = RIG
        rig.ns.run("ip", "neigh", "flush", "all")  # VF_IP is the host VF's here
        host = rig.vf[HOST_VF]
        host_mac = port_mac(host, 0)
        host.cmd("set fwd icmpecho")
        host.cmd("start")

        def host_rx(missed=False):
            stats = host.port_stats(0)
            return stats["RX-packets"] + (stats["RX-missed"] if missed else 0)

        def pinged(count, flooded=False):
            """Every echo answered; under the guest's flood, an echo
            request may find the host's Rx ring full, as on hardware,
            but only if the adapter counted Rx ring drops meanwhile."""
            missed = host.port_stats(0)["RX-missed"]
            ping = rig.ns.run("ping", "-c", str(count), "-i", "0.2", "-W", "5", VF_IP, check=False, timeout=60)
            said = ping.stdout + ping.stderr
            m = re.search(rf"\b{count} packets transmitted, (\d+) received", ping.stdout)
            self.assertIsNotNone(m, said)
            received = int(m.group(1))
            if flooded and received < count:
                self.assertGreater(received, 0, "the host's VF answers during the flood:\n" + said)
                self.assertGreater(host.port_stats(0)["RX-missed"], missed,
                                   "an echo went unanswered, yet the adapter dropped nothing:\n" + said)
            else:
                self.assertEqual(received, count, said)

        with GuestTestPmd(rig.daemon.socket, vf=DYING_VF) as guest:
            guest_mac = port_mac(guest, 0)
            wait_for(lambda: guest.link(0)[0] == "up", timeout=10, what="the guest VF's link")
            # The kernel resolves the host VF's address before the flood:
            # under it, every ARP probe may find the Rx ring full.
            pinged(2)
            guest.cmd("set fwd txonly")
            guest.cmd(f"set eth-peer 0 {host_mac}")
            guest.cmd("start")
            before = host_rx()
            pinged(10, flooded=True)
            time.sleep(1)
            self.assertGreater(host_rx() - before, 1000, "the guest's frames reach the host's VF")
            self.assertRegex(adapterctl(rig.daemon.socket, "status"),
                             rf"(?m)^pf0 vf{DYING_VF}\s+client pid {guest.launcher_pid()} \(a VM\)$",
                             "the guest's cna-vm holds its VF, for a VM")
            log_offset, client = len(rig.daemon.output()), guest.launcher_pid()
            guest.kill()
            guest.close()
            self.assertNotEqual(guest.exit_status, 0, "vm_run says the guest died")

        def reset():
            log = rig.daemon.output()[log_offset:]
            return all(re.search(line, log) for line in (
                rf"\(pid {client}\) on pf0 vf{DYING_VF}: disconnected", rf"iov: pf0 vf{DYING_VF} function level reset",
                rf"\(pid {client}\) on pf0 vf{DYING_VF}: detached"))
        wait_for(reset, timeout=10, what="the daemon's reset of the dead guest's VF:\n" + rig.daemon.output())
        wait_for(lambda: function_state(rig.daemon.socket, f"pf0 vf{DYING_VF}") == "free", timeout=10,
                 what="adapterctl status showing the dead guest's VF free")
        wait_for(lambda: rig.vf_info(DYING_VF)["acquired"] == 0, timeout=10, what="the PF forgetting the dead guest")

        # The host's VF forwards on: pings answered, its counters rising.
        before = host_rx()
        pinged(5)
        self.assertGreaterEqual(host_rx() - before, 5)

        # A new guest takes the VF, the same MAC, and its frames reach the host's VF.
        with GuestTestPmd(rig.daemon.socket, vf=DYING_VF) as guest:
            self.assertEqual(port_mac(guest, 0), guest_mac, "the same VF, the same MAC")
            wait_for(lambda: guest.link(0)[0] == "up", timeout=10, what="the new guest VF's link")
            self.assertRegex(guest.cmd("show port info 0"), r"Driver name: net_cna_vf\n")
            self.assertRegex(adapterctl(rig.daemon.socket, "status"),
                             rf"(?m)^pf0 vf{DYING_VF}\s+client pid {guest.launcher_pid()} \(a VM\)$")
            # what reaches the host's VF: received, or missed when its ring was full
            before, dying_before = host_rx(missed=True), rig.telemetry(f"/cna/vf/stats,0,{DYING_VF}")[0]["opackets"]
            guest.cmd("set fwd txonly")
            guest.cmd(f"set eth-peer 0 {host_mac}")
            guest.cmd("start")
            time.sleep(1)
            sent = forward_stats(guest.cmd("stop"))[0]["TX-packets"]
            self.assertGreater(sent, 1000)
            dying_sent = settled(lambda: rig.telemetry(f"/cna/vf/stats,0,{DYING_VF}")[0]["opackets"],
                               what="the PF's count of what the guest's VF sent") - dying_before
            self.assertGreaterEqual(dying_sent, sent, "the PF counts what the guest's VF sent")
            self.assertEqual(host_rx(missed=True) - before, dying_sent, "all of it reached the host's VF")
            guest.quit()
        host.cmd("stop")


class DaemonDeath(unittest.TestCase):
    def test_the_daemons_end_is_a_removal_in_the_guest(self):
        """A daemon and a guest of their own, the guest's testpmd sending on
        its VF; kill -9 of the daemon: cna-vm, which holds the VF's session,
        clears the VF's signature, and the guest's testpmd hears the
        removal (link down, a device removal event) from its next bulletin
        poll, without waiting out a mailbox's timeout."""
        with Rig(vfs=1, vf_list=()) as rig, GuestTestPmd(rig.daemon.socket, vf=0) as guest:
            wait_for(lambda: guest.link(0)[0] == "up", timeout=10, what="the guest VF's link")
            guest.cmd("set fwd txonly")
            guest.cmd("start")
            rig.daemon.kill()
            out = guest.collect(r"Port 0: device removal event", timeout=30)
            self.assertRegex(out, r"Port 0: device removal event", out)
            self.assertNotRegex(out, r"did not answer", "heard from the signature, not a timeout")


if __name__ == "__main__":
    unittest.main()
