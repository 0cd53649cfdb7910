#!/usr/bin/python3
"""Send and capture raw Ethernet frames on interfaces of the current network
namespace: a server the harness starts once per namespace (run with
`ip netns exec <ns> /usr/bin/python3 nsio.py`) and asks many times.

Why a server: a packet socket's bind and close wait for an RCU grace period
(synchronize_net). Run per request, those waits fell while testpmd's lcores
kept both CPUs busy, and on CI machines they sometimes did not end until
testpmd did. The server binds its sockets when asked to ("bind", before the
lcores start) and keeps them until its namespace goes.

Reads one JSON request per line on stdin:
  {"bind": [ifname, ...]}               open sockets now; answers {"bound": n}
or an exchange:
  {"send": [[ifname, hexframe], ...],   frames written in order, as given
   "gap": seconds between two frames (default 0),
   "capture": [ifname, ...],             interfaces to capture received frames on
   "expect": n,                          stop once n frames were captured ...
   "linger": seconds,                    ... and nothing more arrived this long
   "timeout": seconds}                   give up waiting after this long
which answers {"captured": [[ifname, hexframe], ...]}: frames the kernel
received on those interfaces after the request came (its own transmissions
left out, VLAN tags the kernel took off put back), in arrival order. Frames
are raw bytes, so bad checksums and odd sizes go out as built; the kernel
side of a TAP interface neither computes nor checks them. Answers are one
JSON line each on stdout; it ends when stdin does.

Each step is logged on stderr with the seconds since start, so a caller
that gives up on it can say where it stood.
"""
import faulthandler
import json
import select
import socket
import struct
import sys
import time

ETH_P_ALL = 0x0003
PACKET_OUTGOING = 4
SOL_PACKET = 263
PACKET_AUXDATA = 8
TP_STATUS_VLAN_VALID = 0x10
TP_STATUS_VLAN_TPID_VALID = 0x40
AUXDATA = struct.Struct("=IIIHHHH")  # struct tpacket_auxdata


START = time.monotonic()


def step(what):
    print(f"nsio {time.monotonic() - START:.3f} s: {what}", file=sys.stderr, flush=True)


def recv_frame(s):
    """One frame with its 802.1Q tag put back: the kernel strips the tag on
    receive and reports it beside the data (PACKET_AUXDATA), as libpcap does."""
    data, anc, _, addr = s.recvmsg(65536, socket.CMSG_SPACE(AUXDATA.size))
    for level, kind, blob in anc:
        if level == SOL_PACKET and kind == PACKET_AUXDATA and len(blob) >= AUXDATA.size:
            status, _, _, _, _, tci, tpid = AUXDATA.unpack_from(blob)
            if status & TP_STATUS_VLAN_VALID:
                tpid = tpid if status & TP_STATUS_VLAN_TPID_VALID else 0x8100
                data = data[:12] + struct.pack("!HH", tpid, tci) + data[12:]
    return data, addr


class Sockets:
    """A bound packet socket per interface, opened on first use and opened
    again should the interface of that name be a new one (testpmd started
    again in the same namespace creates its TAP interfaces anew)."""

    def __init__(self):
        self.by_ifname = {}

    def get(self, ifname):
        index = socket.if_nametoindex(ifname)
        bound = self.by_ifname.get(ifname)
        if bound is not None and bound[0] == index:
            return bound[1]
        if bound is not None:
            bound[1].close()
        s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
        s.setsockopt(SOL_PACKET, PACKET_AUXDATA, 1)
        s.bind((ifname, 0))
        self.by_ifname[ifname] = (index, s)
        return s

    def drain(self, ifname):
        """Drop what arrived before this request: it answers an earlier one."""
        s = self.get(ifname)
        while select.select([s], [], [], 0)[0]:
            s.recv(65536)


def exchange(socks, req):
    capture = list(dict.fromkeys(req.get("capture", [])))
    sends = req.get("send", [])
    for ifname in capture:
        socks.drain(ifname)
    gap = req.get("gap", 0)
    for ifname, frame in sends:
        socks.get(ifname).send(bytes.fromhex(frame))
        if gap:
            time.sleep(gap)
    step(f"{len(sends)} frames sent")
    captured = []
    expect = req.get("expect")
    linger = req.get("linger", 0.2)
    deadline = time.monotonic() + req.get("timeout", 1.0)
    readers = {socks.get(i).fileno(): (i, socks.get(i)) for i in capture}
    last = None
    while readers:
        now = time.monotonic()
        if expect is not None and len(captured) >= expect:
            stop = min(deadline, (last or now) + linger)
        else:
            stop = deadline
        if now >= stop:
            break
        ready, _, _ = select.select(list(readers), [], [], stop - now)
        for fd in ready:
            ifname, s = readers[fd]
            data, addr = recv_frame(s)
            if addr[2] == PACKET_OUTGOING:
                continue
            captured.append([ifname, data.hex()])
            last = time.monotonic()
    step(f"{len(captured)} frames captured")
    return {"captured": captured}


def main():
    socks = Sockets()
    for line in sys.stdin:
        req = json.loads(line)
        step("request read")
        # Where it stands, should it ever take far longer than asked.
        faulthandler.dump_traceback_later(req.get("timeout", 1.0) + 20, exit=False)
        if "bind" in req:
            for ifname in req["bind"]:
                socks.get(ifname)
            step(f"{len(req['bind'])} sockets bound")
            answer = {"bound": len(req["bind"])}
        else:
            answer = exchange(socks, req)
        faulthandler.cancel_dump_traceback_later()
        print(json.dumps(answer), flush=True)


if __name__ == "__main__":
    main()
