#!/usr/bin/python3
"""Send and capture raw Ethernet frames on interfaces of the current network
namespace (run with `ip netns exec <ns> /usr/bin/python3 nsio.py`).

Reads a JSON request on stdin:
  {"send": [[ifname, hexframe], ...],   frames written in order, as given
   "gap": seconds between two frames (default 0),
   "capture": [ifname, ...],             interfaces to capture received frames on
   "expect": n,                          stop once n frames were captured ...
   "linger": seconds,                    ... and nothing more arrived this long
   "timeout": seconds}                   give up waiting after this long
and prints {"captured": [[ifname, hexframe], ...]} on stdout: frames the
kernel received on those interfaces (its own transmissions left out, VLAN
tags the kernel took off put back), in arrival order. Frames are raw bytes, so bad checksums and odd sizes go out as
built; the kernel side of a TAP interface neither computes nor checks them.
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


def main():
    req = json.load(sys.stdin)
    step("request read")
    # Where it stands, should it ever take far longer than asked.
    faulthandler.dump_traceback_later(req.get("timeout", 1.0) + 20, exit=False)
    capture = list(dict.fromkeys(req.get("capture", [])))
    sends = req.get("send", [])
    socks = {}
    for ifname in capture + [i for i, _ in sends]:
        if ifname in socks:
            continue
        s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
        s.setsockopt(SOL_PACKET, PACKET_AUXDATA, 1)
        s.bind((ifname, 0))
        socks[ifname] = s
    step(f"{len(socks)} sockets bound")
    gap = req.get("gap", 0)
    for ifname, frame in sends:
        socks[ifname].send(bytes.fromhex(frame))
        if gap:
            time.sleep(gap)

    step(f"{len(sends)} frames sent")
    captured = []
    expect = req.get("expect")
    linger = req.get("linger", 0.2)
    deadline = time.monotonic() + req.get("timeout", 1.0)
    readers = {socks[i].fileno(): (i, socks[i]) for i in capture}
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
    json.dump({"captured": captured}, sys.stdout)


if __name__ == "__main__":
    main()
