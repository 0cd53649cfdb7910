#!/usr/bin/python3
"""The cna demo: Debian's dpdk-testpmd forwarding between two net_cna ports
cabled to each other on one embedded software adapter.

io forwarding is started with tx_first (a burst on each port); testpmd sends
what one port receives out of the other, so the bursts circulate
(port 0 Tx -> cable -> port 1 Rx -> testpmd -> port 0 Tx ...) for a few
seconds, and the port statistics show frames flowing both ways.

Act 2: one port whose wire is a TAP interface; the kernel, in a network
namespace the demo creates (and removes), is its link partner. testpmd in
icmpecho mode answers the kernel's ARP and ping.
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "app", "test", "integration"))
from harness.testpmd import TapRig, TestPmd  # noqa: E402

VDEVS = ["net_cna0,adapter=a,ports=2,wire=cable", "net_cna1,adapter=a,port=1"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(os.path.dirname(__file__), "..", "build"))
    ap.add_argument("--seconds", type=float, default=5.0)
    args = ap.parse_args()

    print("act 1: two ports cabled on one software adapter, testpmd io forwarding\n")
    print("  dpdk-testpmd " + " ".join(f"--vdev {v}" for v in VDEVS) + " -- -i\n")
    with TestPmd(VDEVS, build=args.build) as tp:
        for p in (0, 1):
            print(tp.cmd(f"show port info {p}").split("\n\n")[0].strip() + "\n")
        tp.cmd("clear port stats all")
        tp.cmd("start tx_first")
        print(f"forwarding for {args.seconds:.0f} s ...\n")
        time.sleep(args.seconds)
        print(tp.cmd("stop"))
        for p in (0, 1):
            print(tp.cmd(f"show port stats {p}"))
        tp.quit()
    act2(args)
    return 0


def act2(args):
    print("act 2: the kernel pings testpmd over a TAP wire (icmpecho forwarding)\n")
    with TapRig(1, build=args.build) as rig:
        tp, ns, ifname = rig.tp, rig.ns, rig.ifname[0]
        print("  dpdk-testpmd " + " ".join(f"--vdev {v}" for v in rig.vdevs) + " -- -i")
        print(f"  ip link set {ifname} netns {ns.name}; ip -n {ns.name} addr add 192.0.2.1/24 dev {ifname}\n")
        ns.run("ip", "addr", "add", "192.0.2.1/24", "dev", ifname)
        tp.cmd("set fwd icmpecho")
        tp.cmd("start")
        print(f"  ip netns exec {ns.name} ping -c 4 192.0.2.2\n")
        ping = ns.run("ping", "-c", "4", "-i", "0.3", "-W", "2", "192.0.2.2", check=False, timeout=30)
        print(ping.stdout + ping.stderr)
        print(tp.cmd("stop"))
        tp.quit()
    if ping.returncode != 0:
        raise SystemExit("act 2: ping got no answer")


if __name__ == "__main__":
    sys.exit(main())
