#!/usr/bin/env python3
"""Writes fuzz_vf_pf's seeds (seeds/vf_pf_*): sequences of VF requests as a
VF's driver sends them, in the input format fuzz_vf_pf.cpp describes (a
control byte and the request's TLVs, requests separated by MARKER), with
the addresses of the VF's memory as the fuzz target maps it. Run it again
after a change of hsi_iov.h's layouts or of the target's memory map.
    make_vf_pf_seeds.py [SEED_DIR]"""
import os
import struct
import sys

MARKER = b"\xfeVF\xfe"
FORCE_REPLY = 1
SEND_TWICE = 1 << 1

VF_IOVA = 0x10000000  # fuzz_vf_pf.cpp's memory map of the VF
REPLY = VF_IOVA + 0x1000
BULLETIN = VF_IOVA + 0x2000
SBS = VF_IOVA + 0x3000
RINGS = VF_IOVA + 0x4000  # per queue: Rx BDs, Rx CQEs at +1 KiB, Tx BDs at +2 KiB

HSI_MAJOR, HSI_MINOR = 3, 2
# hsi_iov.h's TlvType
ACQUIRE, RELEASE, CLOSE, VPORT_START, VPORT_UPDATE, VPORT_TEARDOWN = 1, 2, 3, 5, 6, 7
START_RXQ, START_TXQ, STOP_RXQS, STOP_TXQS, UCAST_FILTER, UPDATE_MTU, COALESCE_UPDATE = 8, 9, 10, 11, 13, 14, 15
VPORT_ACTIVATE, VPORT_RX_MODE, VPORT_RSS, VPORT_MCAST = 32, 33, 34, 36
LIST_END = 0x7FFF


def tlv(type_, body):
    return struct.pack("<HH", type_, 4 + len(body)) + body


def request(type_, body=b"", *parts):
    """A request: its first TLV (a RequestHeader naming the reply buffer,
    then body), the parts, list_end."""
    first = tlv(type_, struct.pack("<IQ", 0, REPLY) + body)
    return first + b"".join(parts) + tlv(LIST_END, b"")


def acquire(queues=2, sbs=2):
    return request(ACQUIRE, struct.pack("<IBBBBBBBBIQ", 0x01000000, HSI_MAJOR, HSI_MINOR, queues, queues, sbs, 2, 2, 4,
                                        64, BULLETIN))


def vport_start(sbs=2):
    addrs = [SBS + 64 * i if i < sbs else 0 for i in range(4)]
    return request(VPORT_START, struct.pack("<HBBBBH4Q", 1500, 0, sbs, 1, 1, 0, *addrs))


def start_rxq(queue, sb=0):
    ring = RINGS + queue * 0x1000
    return request(START_RXQ, struct.pack("<QQHHBBBB", ring, ring + 0x400, 64, 2048, queue, sb, 0, 0))


def start_txq(queue, sb=0):
    return request(START_TXQ, struct.pack("<QHBBB3x", RINGS + queue * 0x1000 + 0x800, 64, queue, sb, 1))


def stop(type_, first, count):
    return request(type_, struct.pack("<BB6x", first, count))


def activate(rx=1, tx=1):
    return tlv(VPORT_ACTIVATE, struct.pack("<BBBB", 1, rx, 1, tx))


def rx_mode(ucast_all=0, mcast_all=0):
    return tlv(VPORT_RX_MODE, struct.pack("<BBBB", ucast_all, mcast_all, 1, 0))


def rss(queues=2):
    key = struct.pack("<10I", *range(0x6d5a0001, 0x6d5a0001 + 10))
    return tlv(VPORT_RSS, struct.pack("<BBH", 1, 0x3F, 0) + key + bytes(i % queues for i in range(128)))


def mcast(*macs):
    body = b"".join(macs) + bytes(6 * (32 - len(macs)))
    return tlv(VPORT_MCAST, struct.pack("<HH", len(macs), 0) + body)


def ucast(op, kind, mac=b"\x02\x00\x00\x00\x00\x01", vlan=0):
    return request(UCAST_FILTER, struct.pack("<BB6sH6x", op, kind, mac, vlan))


def seq(*requests, control=FORCE_REPLY):
    return MARKER.join(bytes([control]) + r for r in requests)


UP = (acquire(), vport_start(), start_rxq(0), start_txq(0))
SEEDS = {
    "acquire": seq(acquire()),
    "queues": seq(*UP, request(VPORT_UPDATE, b"", activate(), rx_mode())),
    "rss": seq(*UP, start_rxq(1, 1), request(VPORT_UPDATE, b"", activate(), rx_mode(), rss(),
                                             mcast(b"\x01\x00\x5e\x00\x00\x01", b"\x33\x33\x00\x00\x00\x01"))),
    "ucast_filter": seq(acquire(), vport_start(), ucast(0, 0), ucast(0, 1, vlan=100), ucast(1, 0), ucast(2, 1),
                        ucast(0, 0, b"\x02\x00\x00\x00\x00\x02")),
    "teardown": seq(*UP, request(UPDATE_MTU, struct.pack("<H6x", 9000)),
                    request(COALESCE_UPDATE, struct.pack("<HHB3x", 10, 20, 0)), stop(STOP_RXQS, 0, 1),
                    stop(STOP_TXQS, 0, 2), request(VPORT_TEARDOWN), request(CLOSE), request(RELEASE)),
    # After acquire: an unknown type, a TLV list cut short, a second trigger
    # while pending (malicious).
    "misuse": seq(acquire(), request(99), request(VPORT_UPDATE, b"", activate())[:-6],
                  request(VPORT_TEARDOWN)) + MARKER + bytes([FORCE_REPLY | SEND_TWICE]) + request(CLOSE),
}


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "seeds")
    for name, data in SEEDS.items():
        with open(os.path.join(out, f"vf_pf_{name}"), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
