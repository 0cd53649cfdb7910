"""RDMA CM applications under cna-rdma-run between two "hosts" (VerbsHosts):
a listener, and a requester started again while its listener is still
coming up; cm_probe (app/bench), an RDMA CM application of cna's own.

    with CmHosts() as hosts:
        server, client = hosts.cm_pair(["rping", "-s", "-a", SERVER_IP], ["rping", "-c", "-a", SERVER_IP])
"""
import os
import re
import subprocess
import threading
import time

from harness.rdma import kill_all
from harness.testpmd import build_dir
from harness.verbs import SERVER_IP, VerbsHosts


def cm_probe(build=None):
    return os.path.join(build or build_dir(), "app", "bench", "cm_probe")


def not_listening_yet(output):
    """The client was refused as a request to no listener is: its server
    had not come up yet. A REQ's REJ, reason 8 (rdmacm-utils say "REJECTED,
    error 8", perftest "REJECTED; error: 8", a synchronous rdma_connect
    "Connection refused"); a SIDR REQ's SIDR REP, status 1 (udaddy:
    "UNREACHABLE, error: 1"). fio, and perftest waiting for ESTABLISHED,
    name the event (REJECTED, 8) and no reason; perftest exchanging over
    TCP says "Couldn't connect to" its server."""
    return re.search(r"REJECTED[,;] error:? 8\b|UNREACHABLE, error:? 1\b|rdma_connect: Connection refused|"
                     r"event is RDMA_CM_EVENT_REJECTED instead of|Unexpected CM event bl blka 8\b|"
                     r"Couldn't connect to ", output) is not None


def assert_rping_verified(test, hosts, count):
    """rping -v between the hosts (CmHosts), `count` pings: the client saw
    pings 0 .. count - 1 in order, the server as many (each verified by
    rping itself)."""
    server, client = hosts.cm_pair(["rping", "-s", "-a", SERVER_IP, "-v", "-C", str(count)],
                                   ["rping", "-c", "-a", SERVER_IP, "-v", "-C", str(count)])
    pings = re.findall(r"^ping data: rdma-ping-(\d+):", client, re.M)
    test.assertEqual(pings, [str(i) for i in range(count)], client)
    test.assertEqual(len(re.findall(r"^server ping data: rdma-ping-\d+:", server, re.M)), count, server)


class CmHosts(VerbsHosts):
    def cm_pair(self, server_argv, client_argv, env=None, attempts=20, devargs=("", ""), server_ready=None):
        """`server_argv`, then `client_argv` until the server listened;
        their outputs (server's, client's). Raises, with both, if either
        fails. `devargs`: more of each one's. `server_ready`: a pattern of
        the server's output (CNA_CM_LOG's "listening on port" line, say)
        that the client waits for, so that it starts once, against a
        server already listening."""
        server = self.verbs_host("s", server_argv, env=env, devargs_extra=devargs[0])
        client = None
        early = ""
        try:
            if server_ready is not None:
                early = self.wait_for_output(server, server_ready)
            for attempt in range(attempts):
                client = self.verbs_host("c", client_argv, env=env, devargs_extra=devargs[1])
                out, _ = client.communicate(timeout=self.timeout)
                if client.returncode == 0 or not not_listening_yet(out) or attempt == attempts - 1:
                    break
                time.sleep(0.5)
        except subprocess.TimeoutExpired:
            out = kill_all(client) + f"\n(killed after {self.timeout} s)"
        except BaseException:
            kill_all(server)
            raise
        # A server whose client failed may wait for it for ever: what it
        # says within a few seconds is what it has to say.
        server_wait = self.timeout if client.returncode == 0 else 5
        try:
            server_out, _ = server.communicate(timeout=server_wait)
        except subprocess.TimeoutExpired:
            server_out = kill_all(server) + f"\n(killed after {server_wait} s)"
        server_out = early + server_out
        if client.returncode != 0 or server.returncode != 0:
            raise AssertionError(f"{client_argv[0]}: client {client.returncode}, server {server.returncode}\n"
                                 f"--- server:\n{server_out}\n--- client:\n{out}")
        return server_out, out

    def wait_for_output(self, proc, pattern):
        """`proc`'s output up to and with the first line matching `pattern`
        (what it printed so far); raises, with it, if `proc` ends first or
        prints no such line within the hosts' timeout."""
        seen = []
        ready = threading.Event()

        def read():
            for line in iter(proc.stdout.readline, ""):
                seen.append(line)
                if re.search(pattern, line):
                    ready.set()
                    return
            ready.set()

        threading.Thread(target=read, daemon=True).start()
        if not ready.wait(self.timeout) or not seen or not re.search(pattern, seen[-1]):
            raise AssertionError(f"{pattern!r} never came from the server:\n{kill_all(proc)}{''.join(seen)}")
        return "".join(seen)

    def probe_server(self, port, env=None, events=False):
        """cm_probe serving on SERVER_IP:port, once it listens; with
        `events`, saying each (then read its output as it comes: a full
        pipe stops it)."""
        server = self.verbs_host("s", [cm_probe(self.build), "serve", SERVER_IP, str(port),
                                       *(["events"] if events else [])], env=env)
        line = server.stdout.readline()
        while line and line.strip() != "listening":
            line = server.stdout.readline()
        if not line:
            raise AssertionError(f"cm_probe serve ended: {server.communicate()[0]}")
        return server

    def client_alone(self, argv, env=None):
        """`argv` as the client with no server: (returncode, output, seconds)."""
        start = time.monotonic()
        client = self.verbs_host("c", argv, env=env)
        out, _ = client.communicate(timeout=self.timeout)
        return client.returncode, out, time.monotonic() - start
