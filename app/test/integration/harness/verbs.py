"""Unmodified verbs applications on cna's provider, through cna-rdma-run:
one process alone (ibv_devices, ibv_devinfo), or two "hosts", each a
process with its own adapter on a TAP wire, both TAPs in one Linux bridge
(harness.rdma.BridgedHosts), exchanging connection data over TCP in the
bridge's namespace.

    with VerbsHosts() as hosts:
        server, client = hosts.verbs_pair(["ibv_rc_pingpong", "-g", "1"])
"""
import os
import re
import subprocess
import unittest

from harness.rdma import BridgedHosts, kill_all
from harness.testpmd import build_dir

SERVER_IP, CLIENT_IP = "10.0.0.1", "10.0.0.2"


def needs_root_and_tun(cls):
    """Two hosts need a namespace, a bridge and TAPs."""
    return unittest.skipUnless(os.geteuid() == 0 and os.path.exists("/dev/net/tun"),
                               "needs root and /dev/net/tun")(cls)


def regular_pass_only(what):
    """Skips slow repetitions of paths the sanitized pass covers once
    already (its runtimes are preloaded)."""
    if os.environ.get("LD_PRELOAD"):
        raise unittest.SkipTest(f"the sanitized pass: {what} is the regular pass's")


# UCX on cna's device: its port and the IPv4 GID.
UCX_ENV = {"UCX_NET_DEVICES": "cna0:1", "UCX_IB_GID_INDEX": "1"}
# ucx_perftest's last line: iterations, latency (50th percentile, average,
# overall), MB/s (average, overall), messages/s (average, overall). A
# figure of an interval that held no iteration (a slow, sanitized run
# finishing within its first report) is "inf", or "-nan" where the interval
# also took no time; the overall figures are always numbers.
UCX_FINAL = re.compile(r"^Final:\s+(\d+)" + r"\s+([\d.]+|inf|-?nan)" * 7, re.M)


def rdma_run_path(build=None):
    return os.path.join(build or build_dir(), "pmd", "rdma", "provider", "cna-rdma-run")


def provider_path(build=None):
    return os.path.join(build or build_dir(), "pmd", "rdma", "provider", "libcna-rdmav34.so")


def rdma_run(argv, devargs=None, timeout=60, env=None, rdma_run=None):
    """`argv` under cna-rdma-run in this namespace: (returncode, stdout, stderr)."""
    e = dict(os.environ, **(env or {}))
    if devargs is not None:
        e["CNA_RDMA_DEVARGS"] = devargs
    proc = subprocess.run([rdma_run or rdma_run_path(), *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, env=e, timeout=timeout)
    return proc.returncode, proc.stdout, proc.stderr


class VerbsHosts(BridgedHosts):
    """BridgedHosts whose processes are verbs applications on cna-rdma-run;
    the server's port has IPv4 address SERVER_IP (GID index 1), the
    client's CLIENT_IP."""

    def __init__(self, build=None, timeout=120, mtu=None):
        super().__init__(build, timeout)
        self.env = {"CNA_RDMA_MTU": str(mtu)} if mtu else {}

    def devargs(self, role):
        """The role's port: an adapter of its own on a TAP in the bridge."""
        ip = SERVER_IP if role == "s" else CLIENT_IP
        return f"adapter=vb{self.tag}{role},wire=tap:{self.tap(role)},ipv4={ip}/24"

    def verbs_host(self, role, argv, server=None, env=None, devargs_extra="", stdin=None):
        env = dict(os.environ, CNA_RDMA_DEVARGS=self.devargs(role) + devargs_extra, **self.env, **(env or {}))
        return self.ns.popen(rdma_run_path(self.build), *argv, *([server] if server else []), stdin=stdin,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
                             start_new_session=True)

    def tap(self, role):
        """The role's TAP, made persistent in the bridge before its process
        starts: an application may open its device, and so bring up its
        adapter, only late (ucx_perftest's server does once a client
        connects)."""
        ifname = f"v{self.tag}{role}"[:15]
        if self.ns.run("ip", "link", "show", ifname, check=False).returncode != 0:
            self.ns.run("ip", "tuntap", "add", "mode", "tap", "name", ifname)
            self.ns.run("ip", "link", "set", ifname, "master", "br0", "up")
        return ifname

    def verbs_pair(self, argv, client_argv=None, env=None):
        """`argv` as the server, then (with the server's address appended)
        `client_argv` or `argv` as the client; their outputs (server's,
        client's). Raises, with both outputs, if either fails."""
        argv = [*argv, "-p", self.tcp_port()]
        client_argv = [*client_argv, "-p", self.tcp_port()] if client_argv else argv
        server = self.verbs_host("s", argv, env=env)
        try:
            self.wait_listening(server)
            client = self.verbs_host("c", client_argv, server="127.0.0.1", env=env)
        except BaseException:
            kill_all(server)
            raise
        return self.finish(argv[0], server, client)
