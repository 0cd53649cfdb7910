#!/usr/bin/python3
"""Debian's l3fwd example routing between two kernel hosts over net_cna.

Builds /usr/share/dpdk/examples/l3fwd (package dpdk-doc) unmodified into
<build>/examples/l3fwd/ with its own Makefile (pkg-config libdpdk), and runs
it with -d <PMD> on two ports of one adapter whose wires are TAP interfaces,
each moved into a network namespace of its own: two hosts in two subnets.

l3fwd's default LPM table sends 198.18.<x>.0/24 out of port x, so host A
(port 0's wire) is 198.18.0.1/24 and host B (port 1's wire) 198.18.1.1/24;
each routes the other subnet via a gateway address (.254) whose neighbour
entry is the l3fwd port's MAC (l3fwd does not answer ARP), and l3fwd writes
the host's MAC as destination (--eth-dest).

    python3 -m harness.l3fwd [--build DIR]   # in app/test/integration: ping and a TCP transfer, printed
"""
import argparse
import re
import subprocess
import sys
import threading
import time

from .examples import build_example
from .testpmd import PYTHON, Netns, Started, TestPmdError, build_dir, eal_args, tap_vdevs, unique_tag, wait_for_iface  # noqa: E402

HOSTS = [  # (address, gateway, kernel MAC) of the host on port 0 and port 1
    ("198.18.0.1", "198.18.0.254", "02:c0:a0:00:00:0a"),
    ("198.18.1.1", "198.18.1.254", "02:c0:a0:00:00:0b"),
]


class L3fwdRig(Started):
    """l3fwd on two TAP-wired net_cna ports, hosts A and B in two namespaces.

        with L3fwdRig() as rig:
            rig.ns[0].run("ping", "-c", "3", HOSTS[1][0])
    """

    def __init__(self, build=None, timeout=30, plugin=True):
        """plugin=False: no -d, net_cna from an installed package."""
        self.build, self.timeout, self.plugin = build, timeout, plugin
        tag = unique_tag()
        self.ifname = [f"cnl{tag}p{p}"[:15] for p in (0, 1)]
        self.proc, self.ns, self.output = None, [], ""

    def start(self):
        binary = build_example("l3fwd", self.build)
        args = eal_args(tap_vdevs(self.ifname), self.build, plugin=self.plugin) + [
            "--", "-p", "0x3", "--config=(0,0,1),(1,0,1)",
            f"--eth-dest=0,{HOSTS[0][2]}", f"--eth-dest=1,{HOSTS[1][2]}"]
        self.command = [binary] + args
        self.proc = subprocess.Popen(self.command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                     errors="replace")
        self._chunks = []
        self._reader = threading.Thread(target=lambda: self._chunks.extend(iter(self.proc.stdout.readline, "")),
                                        daemon=True)
        self._reader.start()
        self.port_mac = self.wait_output(r"entering main loop", lambda out: re.findall(
            r"Address:([0-9A-Fa-f:]{17})", out))
        if len(self.port_mac) != 2:
            raise TestPmdError("l3fwd printed no MAC for both ports:\n" + self.output)
        for p, ifname in enumerate(self.ifname):
            addr, gw, mac = HOSTS[p]
            other = HOSTS[1 - p][0].rsplit(".", 1)[0] + ".0/24"
            ns = Netns()
            self.ns.append(ns)
            wait_for_iface(ifname)
            ns.adopt(ifname, mac=mac, addr=f"{addr}/24")
            ns.run("ip", "neigh", "replace", gw, "lladdr", self.port_mac[p].lower(), "dev", ifname, "nud",
                   "permanent")
            ns.run("ip", "route", "add", other, "via", gw, "dev", ifname)

    def wait_output(self, pattern, parse, timeout=None):
        deadline = time.monotonic() + (timeout or self.timeout)
        while not re.search(pattern, self.output):
            if self.proc.poll() is not None:
                self.read()
                raise TestPmdError(f"l3fwd exited ({self.proc.returncode}):\n{self.output}")
            if time.monotonic() > deadline:
                raise TestPmdError(f"l3fwd did not print {pattern!r}:\n{self.output}")
            self.read()
            time.sleep(0.05)
        return parse(self.output)

    def read(self):
        self.output = "".join(list(self._chunks))
        return self.output

    def __exit__(self, *exc):
        try:
            if self.proc is not None and self.proc.poll() is None:
                self.proc.send_signal(2)  # SIGINT: l3fwd closes its ports and exits
                try:
                    self.proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait()
            if self.proc is not None:
                self._reader.join(timeout=5)
                self.read()
        finally:
            for ns in self.ns:
                ns.delete()

    # -- what the hosts do ---------------------------------------------------
    def ping(self, src, count=3):
        return self.ns[src].run("ping", "-c", str(count), "-i", "0.2", "-W", "2", HOSTS[1 - src][0],
                                check=False, timeout=30)

    def tcp_transfer(self, nbytes=4 << 20, port=5001):
        """Host A sends nbytes of pseudo-random data to host B over TCP;
        returns (sha256 sent, sha256 received, bytes received, seconds)."""
        server = self.ns[1].popen(PYTHON, "-c", TCP_SERVER, HOSTS[1][0], str(port),
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            t0 = time.monotonic()
            client = self.ns[0].run(PYTHON, "-c", TCP_CLIENT, HOSTS[1][0], str(port), str(nbytes),
                                    check=False, timeout=60)
            out, err = server.communicate(timeout=60)
            elapsed = time.monotonic() - t0
        finally:
            if server.poll() is None:
                server.kill()
                server.wait()
        if client.returncode != 0:
            raise TestPmdError(f"TCP client failed:\n{client.stdout}{client.stderr}")
        got = out.split()
        if len(got) != 2:
            raise TestPmdError(f"TCP server failed:\n{out}{err}")
        return client.stdout.strip(), got[0], int(got[1]), elapsed


TCP_SERVER = r"""
import hashlib, socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], int(sys.argv[2]))); s.listen(1); s.settimeout(30)
c, _ = s.accept(); c.settimeout(30)
h, n = hashlib.sha256(), 0
while True:
    b = c.recv(1 << 16)
    if not b:
        break
    h.update(b); n += len(b)
print(h.hexdigest(), n)
"""

TCP_CLIENT = r"""
import hashlib, random, socket, sys, time
n = int(sys.argv[3]); data = random.Random(7).randbytes(n)
for attempt in range(50):
    try:
        c = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=10); break
    except ConnectionRefusedError:
        time.sleep(0.1)
c.sendall(data); c.shutdown(socket.SHUT_WR)
c.settimeout(30); c.recv(1)
print(hashlib.sha256(data).hexdigest())
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=build_dir())
    args = ap.parse_args()
    with L3fwdRig(build=args.build) as rig:
        print(" ".join(rig.command) + "\n")
        for p in (0, 1):
            print(f"host {'AB'[p]}: {HOSTS[p][0]}/24 on {rig.ifname[p]} in {rig.ns[p].name}")
        print(rig.ping(0).stdout)
        sent, received, n, secs = rig.tcp_transfer()
        print(f"TCP: {n} bytes in {secs:.2f} s, sha256 sent {sent[:16]}..., received {received[:16]}..."
              f" {'(equal)' if sent == received else '(DIFFERENT)'}")
        return 0 if sent == received else 1


if __name__ == "__main__":
    sys.exit(main())
