"""Where the embedded adapter's dataplane runs (devarg engine=): inline on
the lcores that poll the ports, or a DPDK service on EAL's service cores,
beside the engine threads every other module runs with. Each placement
forwards with Debian's testpmd on a cable and on TAP wires (the kernel on
the other end), follows link changes, returns every mbuf at stop, and
carries RDMA (rdma_pingpong between two processes, rdma_perf on cabled
ports); what cannot work is refused by name."""
import os
import re
import subprocess
import time
import unittest

from harness.rdma import EAL, BridgedHosts, example, perf_rows
from harness.testpmd import TapRig, TestPmd, forward_stats, frame, run_testpmd_once

CABLED = ["net_cna0,ports=2,wire=cable,engine={engine}", "net_cna1,adapter=net_cna0,port=1"]


def lcores_for(engine):
    """testpmd's lcores for a placement: with engine=service, lcore 1 is the
    service core (CPU 0, beside the main lcore, which only reads commands)
    and lcore 2 forwards on CPU 1."""
    return {"lcores": "0@0,1@0,2@1", "eal_extra": ["-s", "0x2"]} if engine == "service" else {}


def testpmd(engine, vdevs):
    return TestPmd(vdevs, **lcores_for(engine))


class Forwarding:
    """The same checks for each placement (the subclasses')."""
    engine = None

    def test_a_cable_forwards_and_stop_returns_every_mbuf(self):
        with testpmd(self.engine, [v.format(engine=self.engine) for v in CABLED]) as tp:
            mode = tp.cmd("show rxq info 0 0")
            if self.engine == "inline":
                self.assertIn("inline engine", mode)
            else:
                self.assertNotIn("inline", mode)
            fwd = forward_stats(tp.run_forwarding(1.0))
            for p in (0, 1):
                self.assertGreater(fwd[p]["RX-packets"], 10000, f"port {p}: {fwd}")
                self.assertGreater(fwd[p]["TX-packets"], 10000, f"port {p}: {fwd}")
            tp.cmd("port stop all")
            self.assertEqual(set(tp.mempool_in_use().values()), {0}, "mbufs held by stopped ports")
            tp.cmd("port start all")
            fwd = forward_stats(tp.run_forwarding(0.5))
            self.assertGreater(fwd[0]["RX-packets"], 1000, "forwarding after a restart")
            tp.cmd("port stop all")
            tp.cmd("port close all")
            self.assertEqual(set(tp.mempool_in_use().values()), {0}, "mbufs lost by stop/close")
            tp.quit()

    def test_link_down_and_up(self):
        with testpmd(self.engine, [v.format(engine=self.engine) for v in CABLED]) as tp:
            tp.wait_link_up(0)
            tp.cmd("set link-down port 0")
            deadline = time.monotonic() + 5
            while tp.link(1)[0] != "down":
                self.assertLess(time.monotonic(), deadline, "the cable's other end never saw the link go down")
                time.sleep(0.05)
            tp.cmd("set link-up port 0")
            tp.wait_link_up(0)
            tp.wait_link_up(1)
            fwd = forward_stats(tp.run_forwarding(0.5))
            self.assertGreater(fwd[1]["RX-packets"], 1000, f"forwarding after the link came back: {fwd}")
            tp.quit()

    @unittest.skipUnless(os.geteuid() == 0 and os.path.exists("/dev/net/tun"), "needs root and /dev/net/tun")
    def test_tap_wires_carry_the_kernels_frames_through_testpmd(self):
        with TapRig(2, vdev_extra=f",engine={self.engine}", **lcores_for(self.engine)) as rig:
            rig.tp.wait_link_up(0)
            rig.tp.wait_link_up(1)
            rig.tp.cmd("set fwd io")
            rig.tp.cmd("start")
            frames = [frame("02:00:00:00:0b:01", payload=bytes([i]) * 40) for i in range(20)]
            got = rig.io(send=[(0, f) for f in frames], capture=[1], expect=len(frames), timeout=3.0)
            rig.tp.cmd("stop")
            payloads = {bytes(f)[-40:] for _, f in got}
            self.assertEqual(payloads, {bytes([i]) * 40 for i in range(20)}, "every frame across, once")


def stream_stats(stop_output):
    """{(rx port, rx queue, tx port, tx queue): RX-packets} from testpmd's
    `stop` with more streams than ports."""
    pattern = (r"RX Port=\s*(\d+)/Queue=\s*(\d+) -> TX Port=\s*(\d+)/Queue=\s*(\d+)\s*-+\s*"
               r"RX-packets:\s*(\d+)")
    return {tuple(map(int, m[:4])): int(m[4]) for m in re.findall(pattern, stop_output)}


class Inline(Forwarding, unittest.TestCase):
    engine = "inline"

    def test_two_lcores_forward_each_on_queues_of_their_own(self):
        """Two forwarding lcores on two queue pairs per port, many flows:
        each lcore's doorbells are served in passes of its queues' own,
        beside the other's, and both forward their share with nothing
        dropped; stop returns every mbuf."""
        app = ["--nb-cores=2", "--rxq=2", "--txq=2", "--txonly-multi-flow"]
        with TestPmd([v.format(engine="inline") for v in CABLED], app_args=app, lcores="0@0,1@0,2@1") as tp:
            tp.wait_link_up(0)
            tp.wait_link_up(1)
            out = tp.run_forwarding(2.0)
            streams = stream_stats(out)
            self.assertEqual(len(streams), 4, out)
            for queue in (0, 1):
                moved = sum(n for (_, rxq, _, _), n in streams.items() if rxq == queue)
                self.assertGreater(moved, 10000, f"the lcore of queue {queue}: {streams}")
            fwd = forward_stats(out)
            for p in (0, 1):
                self.assertEqual(fwd[p]["RX-dropped"], 0, f"port {p}: {fwd}")
                self.assertEqual(fwd[p]["TX-dropped"], 0, f"port {p}: {fwd}")
            stats = tp.cmd("show port stats all")
            self.assertEqual(re.findall(r"RX-missed:\s*(\d+)", stats), ["0", "0"], stats)
            tp.cmd("port stop all")
            self.assertEqual(set(tp.mempool_in_use().values()), {0}, "mbufs held by stopped ports")
            tp.quit()


class Service(Forwarding, unittest.TestCase):
    engine = "service"

    def test_a_port_no_service_core_runs_says_so(self):
        status, _, out = run_testpmd_once([v.format(engine="service") for v in CABLED], ["port start all"])
        self.assertEqual(status, 0, out)
        self.assertIn("engine=service: no service core runs service cna_engine_net_cna0", out)


@unittest.skipUnless(os.geteuid() == 0 and os.path.exists("/dev/net/tun"), "needs root and /dev/net/tun")
class Rdma(unittest.TestCase):
    def test_pingpong_between_two_inline_processes(self):
        with BridgedHosts() as hosts:
            server, client = hosts.pingpong(["-s", "3000", "-n", "200"], server_vdev=",engine=inline",
                                            client_vdev=",engine=inline")
            self.assertIn("iters", client)

    def test_completion_events_are_refused_inline(self):
        """An application that would sleep on a completion channel: nothing
        would run the adapter while it sleeps, so arming the CQ fails, said
        in the log, and the example stops."""
        with BridgedHosts() as hosts:
            server = hosts.host("s", 0, ["-p", hosts.tcp_port(), "-e"], vdev_extra=",engine=inline")
            out, _ = server.communicate(timeout=60)
            self.assertNotEqual(server.returncode, 0, out)
            self.assertIn("no completion events with engine=inline", out)
            self.assertIn("Couldn't request CQ notification", out)

    def cable(self, engine, eal_lcores, args):
        tag = f"ep{os.getpid()}{engine}"
        argv = [example("rdma_perf"), *eal_lcores, *EAL, "--file-prefix", tag,
                "--vdev", f"net_cna0,adapter={tag},ports=2,wire=cable,engine={engine}",
                "--vdev", f"net_cna1,adapter={tag},port=1",
                "--", "--cable", "--port-mtu", "9000", "--check", *args]
        run = subprocess.run(argv, capture_output=True, text=True, timeout=120)
        self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
        return run.stdout

    def test_perf_on_cabled_ports_with_each_placement(self):
        lcores = {"inline": ["-l", "1"], "service": ["--lcores", "0@1,1@0", "-s", "0x2"]}
        for engine, eal_lcores in lcores.items():
            for test in ("write", "read", "send"):
                with self.subTest(engine=engine, test=test):
                    out = self.cable(engine, eal_lcores, ["-T", test, "-s", "64,4097,65536", "-n", "200"])
                    self.assertEqual(sorted(perf_rows(out)), [64, 4097, 65536], out)
            with self.subTest(engine=engine, test="write latency"):
                out = self.cable(engine, eal_lcores, ["-T", "write", "--latency", "-s", "8", "-n", "200"])
                self.assertEqual(perf_rows(out), {8: 200}, out)


class Refused(unittest.TestCase):
    def assert_refused(self, vdevs, message):
        """The last vdev's probe fails, saying `message`."""
        _, _, out = run_testpmd_once(vdevs)
        self.assertIn(message, out)
        self.assertIn(f"failed to initialize {vdevs[-1].split(',')[0]} device", out)

    def test_an_unknown_placement(self):
        self.assert_refused(["net_cna0,engine=elsewhere"],
                            "invalid devarg 'engine=elsewhere': expected threads, inline or service")

    def test_engine_threads_with_the_hosts_threads(self):
        self.assert_refused(["net_cna0,ports=2,engine=inline,engine_threads=2"],
                            "invalid devarg 'engine_threads' with engine=inline or engine=service")

    def test_a_daemons_adapter_runs_on_its_own_threads(self):
        self.assert_refused(["net_cna0,daemon=/run/cna/none.sock,engine=inline"],
                            "invalid devarg 'engine' with 'daemon'")

    def test_a_port_joining_an_adapter_of_another_placement(self):
        self.assert_refused(["net_cna0,ports=2,engine=inline", "net_cna1,adapter=net_cna0,port=1,engine=threads"],
                            "adapter net_cna0 exists with its dataplane on the host's threads")


if __name__ == "__main__":
    unittest.main()
