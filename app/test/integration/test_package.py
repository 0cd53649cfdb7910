"""The Debian packages (./cna package: dist/*.deb), installed on this machine
the way a user installs them and removed again.

Installed, unmodified dpdk-testpmd finds net_cna without -d (the EAL loads
it from its driver directory); cna-adapterd runs from its unit's command
line and serves a testpmd; the examples build from the installed
documentation with their Makefiles, through pkg-config against the
installed headers and libraries, and pass the same checks as the in-tree
builds; purging the packages leaves /etc, /usr, /lib and dpkg's and
systemd's state as they were, and none of the packages' files.

./cna test builds the packages first and names them in CNA_DIST; without
them the module is skipped, or fails where CI is set."""
import glob
import os
import re
import shlex
import shutil
import signal
import subprocess
import tempfile
import time
import unittest

from harness import flow_classifier, rdma_hello
from harness.l3fwd import HOSTS, L3fwdRig
from harness.testpmd import TestPmd, eal_driver_dir, sh as run

DIST = os.environ.get("CNA_DIST", "")
# What an install may change, compared before and after: every file and
# link, with its kind and a link's target.
WATCHED = ("/etc", "/usr", "/lib", "/var/lib/dpkg/info", "/var/lib/systemd")
UNIT = "/lib/systemd/system/cna-adapterd.service"
EXAMPLES = "/usr/share/doc/cna-doc/examples"


def sh(*argv, timeout=60):
    """A command's standard output; on failure raise with its output."""
    return run(*argv, timeout=timeout).stdout


def debs():
    return sorted(glob.glob(os.path.join(DIST, "*.deb"))) if DIST else []


def package_name(deb):
    return sh("dpkg-deb", "--field", deb, "Package").strip()


def installed(package):
    out = subprocess.run(["dpkg-query", "-W", "-f=${db:Status-Abbrev}", package], stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True).stdout
    return out.startswith("i") or out.startswith("r")  # installed, or its conffiles left


def snapshot():
    state = {}
    for top in WATCHED:
        for root, dirs, files in os.walk(top):
            for name in dirs + files:
                path = os.path.join(root, name)
                if os.path.islink(path):
                    state[path] = "link " + os.readlink(path)
                elif name in files:
                    state[path] = "file"
            state[root] = "dir"
    return state


def missing():
    if not debs():
        return "no packages: CNA_DIST names no directory of .debs (./cna test builds them with ./cna package)"
    return None


@unittest.skipIf(missing() and not os.environ.get("CI"), missing())
class InstalledPackages(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if missing():  # only where CI is set: there, a failure
            raise RuntimeError(f"the package tests cannot run: {missing()}; CI is set")
        cls.packages = [package_name(d) for d in debs()]
        # A run that died with them installed: they go first, so the
        # comparison starts from a system without them.
        leftovers = [p for p in cls.packages if installed(p)]
        if leftovers:
            sh("dpkg", "--purge", *leftovers, timeout=120)
        cls.before = snapshot()
        sh("dpkg", "-i", *debs(), timeout=300)
        cls.files = {}
        for p in cls.packages:
            cls.files[p] = [line for line in sh("dpkg", "-L", p).splitlines() if line.startswith("/")]

    @classmethod
    def tearDownClass(cls):
        if not hasattr(cls, "before"):
            return
        sh("dpkg", "--purge", *cls.packages, timeout=300)
        after = snapshot()
        still = sorted(p for p in cls.packages if installed(p))
        left = sorted(f for files in cls.files.values() for f in files
                      if os.path.lexists(f) and cls.before.get(f) != after.get(f))
        added = sorted(set(after) - set(cls.before))
        gone = sorted(set(cls.before) - set(after))
        changed = sorted(p for p in set(after) & set(cls.before) if after[p] != cls.before[p])
        problems = [f"{what}: {paths[:20]}" for what, paths in
                    (("still installed", still), ("package files left", left), ("new files", added),
                     ("files gone", gone), ("files changed kind or target", changed)) if paths]
        if problems:
            raise AssertionError("purging the packages did not restore the system:\n" + "\n".join(problems))

    # -- what is where ---------------------------------------------------------
    def test_files_where_users_and_tools_look(self):
        pmd = os.path.join(eal_driver_dir(), "librte_net_cna.so.0")
        self.assertIn(pmd, self.files["librte-net-cna0"], "the PMD is in the EAL's driver directory")
        self.assertTrue(os.path.samefile(pmd, "/usr/lib/x86_64-linux-gnu/librte_net_cna.so.0"),
                        "-lrte_net_cna and the EAL's loading open one file")
        self.assertTrue(os.path.isfile("/lib/firmware/cna/cna_fw.bin"))
        self.assertTrue(os.path.isfile("/etc/cna/adapterd.conf"))
        self.assertIn("/etc/cna/adapterd.conf", sh("dpkg-query", "-W", "-f=${Conffiles}", "cna-adapterd"))
        for page in ("cna-adapterd", "cna-adapterctl", "cna-vm"):
            self.assertTrue(sh("man", "-w", page).strip().startswith("/usr/share/man/"), page)
        version = sh("dpkg-query", "-W", "-f=${Version}", "libcna-dev").strip()
        for module, lib in (("cna-net", "-lrte_net_cna"), ("cna-rdma", "-lrte_rdma_cna")):
            self.assertEqual(sh("pkg-config", "--modversion", module).strip(), version)
            self.assertIn(lib, sh("pkg-config", "--libs", module).split())
            self.assertIn("-I/usr/include/cna", sh("pkg-config", "--cflags", module).split())
        # The DPDK it was built for, to the release: the driver API is not
        # stable across DPDK releases.
        dpdk = sh("pkg-config", "--modversion", "libdpdk").strip()
        depends = sh("dpkg-query", "-W", "-f=${Depends}", "librte-net-cna0")
        self.assertRegex(depends, rf"librte-ethdev\d+ \(>= {re.escape(dpdk)}~\)")
        self.assertRegex(depends, rf"librte-ethdev\d+ \(<< {re.escape(dpdk)}\.~\)")
        info = sh("dpdk-pmdinfo.py", pmd)
        for driver in ("net_cna", "net_cna_vf"):
            self.assertRegex(info, rf"\b{driver}\b")

    def test_verbs_applications_find_the_installed_provider(self):
        provider = "/usr/lib/x86_64-linux-gnu/libibverbs/libcna-rdmav34.so"
        self.assertIn(provider, self.files["ibverbs-provider-cna"], "where libibverbs loads providers from")
        with open("/etc/libibverbs.d/cna.driver") as f:
            self.assertEqual(f.read().split(), ["driver", provider[: -len("-rdmav34.so")]])
        self.assertTrue(sh("man", "-w", "cna-rdma-run").strip().startswith("/usr/share/man/"))
        # As Debian's own providers: a libibverbs that exports the private ABI
        # it was built on (and whose ABI bump Breaks older providers).
        self.assertRegex(sh("dpkg-query", "-W", "-f=${Depends}", "ibverbs-provider-cna"), r"libibverbs1 \(>= \d+")
        out = sh("env", "CNA_RDMA_DEVARGS=wire=loopback,ipv4=10.2.0.1/24", "cna-rdma-run", "ibv_devinfo", "-v")
        self.assertRegex(out, r"hca_id:\s+cna0")
        self.assertIn("::ffff:10.2.0.1, RoCE v2", out)
        self.assertIn("state:\t\t\tPORT_ACTIVE (4)", out)
        # RDMA CM applications get cna's librdmacm under cna-rdma-run, and
        # only there.
        rdmacm = "/usr/lib/x86_64-linux-gnu/cna/rdmacm/librdmacm.so.1"
        self.assertIn(rdmacm, self.files["ibverbs-provider-cna"])
        self.assertIn(f"librdmacm.so.1 => {rdmacm}", sh("cna-rdma-run", "ldd", "/usr/bin/rping"))
        self.assertNotIn("/cna/rdmacm/", sh("ldd", "/usr/bin/rping"))

    # -- applications --------------------------------------------------------------
    def test_testpmd_finds_net_cna_without_d(self):
        cabled = ["net_cna0,adapter=pkg,ports=2,wire=cable", "net_cna1,adapter=pkg,port=1"]
        with TestPmd(cabled, plugin=False, eal_extra=["--log-level=lib.eal:debug"]) as tp:
            self.assertNotIn(" -d ", " ".join(tp.args))
            self.assertRegex(tp.startup_output, re.escape(eal_driver_dir()) + r"/librte_net_cna\.so",
                             "the EAL loaded net_cna from its driver directory")
            self.assertRegex(tp.cmd("show port info 0"), r"Driver name: net_cna\b")
            tp.wait_link_up()
            tp.run_forwarding(1)
            self.assertGreater(tp.port_stats(1)["RX-packets"], 1000, "frames crossed the cable")

    def test_l3fwd_finds_net_cna_without_d(self):
        """Debian's l3fwd example, unmodified, routing between two kernel
        hosts on TAP-wired ports."""
        rig = self.enterContext(L3fwdRig(plugin=False))
        self.assertNotIn("-d", rig.command)
        for src in (0, 1):
            out = rig.ping(src)
            self.assertEqual(out.returncode, 0, f"ping {HOSTS[1 - src][0]}:\n{out.stdout}{out.stderr}\n{rig.read()}")
            self.assertRegex(out.stdout, r"ttl=63", "l3fwd routed it")

    def test_daemon_runs_from_its_unit(self):
        with open(UNIT) as f:
            unit = f.read()
        argv = shlex.split(re.search(r"^ExecStart=(.*)$", unit, re.M).group(1))
        runtime = "/run/" + re.search(r"^RuntimeDirectory=(.*)$", unit, re.M).group(1)
        self.assertEqual(argv[0], "/usr/sbin/cna-adapterd")
        with open("/etc/cna/adapterd.conf") as f:
            socket = re.search(r"^\s*socket\s*=\s*(\S+)", f.read(), re.M).group(1)
        self.assertTrue(socket.startswith(runtime + "/"), "the configured socket is in the unit's runtime directory")
        if os.path.exists(socket):
            self.skipTest(f"{socket} exists: a cna-adapterd of this system serves it")
        # What systemd does first: the runtime directory, removed at the end.
        made = not os.path.isdir(runtime)
        os.makedirs(runtime, mode=0o755, exist_ok=True)
        daemon = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        try:
            deadline = time.monotonic() + 10
            while not os.path.exists(socket):
                if daemon.poll() is not None:
                    self.fail(f"the daemon exited ({daemon.returncode}):\n{daemon.stdout.read()}")
                self.assertLess(time.monotonic(), deadline, "the daemon did not serve its socket")
                time.sleep(0.05)
            status = sh("/usr/bin/cna-adapterctl", "--socket", socket, "status")
            self.assertRegex(status, r"pf0")
            with TestPmd([f"net_cna0,daemon={socket},pf=0"], plugin=False) as tp:
                self.assertRegex(tp.cmd("show port info 0"), r"Driver name: net_cna\b")
                tp.wait_link_up()
                self.assertRegex(sh("/usr/bin/cna-adapterctl", "--socket", socket, "status"), r"client pid \d+")
            daemon.send_signal(signal.SIGTERM)
            self.assertEqual(daemon.wait(timeout=10), 0, daemon.stdout.read())
        finally:
            if daemon.poll() is None:
                daemon.kill()
                daemon.wait()
            daemon.stdout.close()
            if made:
                shutil.rmtree(runtime, ignore_errors=True)
        self.assertFalse(os.path.exists(socket))

    def built_example(self, name, binary):
        """A copy of an installed example, built with its Makefile the way its
        user builds it: pkg-config against the installed files only."""
        work = tempfile.mkdtemp(prefix=f"cna-{name}-")
        self.addCleanup(shutil.rmtree, work, ignore_errors=True)
        src = os.path.join(work, name)
        shutil.copytree(os.path.join(EXAMPLES, name), src)
        env = {k: v for k, v in os.environ.items() if not k.startswith("PKG_CONFIG")}
        proc = subprocess.run(["make", "-C", src], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              env=env, timeout=300)
        self.assertEqual(proc.returncode, 0, proc.stdout)
        path = os.path.join(src, binary)
        if not os.path.exists(path):
            path = os.path.join(src, "build", binary)
        self.assertNotIn("/work/", proc.stdout.replace(work, ""), "nothing of the source tree is used")
        ldd = sh("ldd", path)
        return path, ldd

    def test_flow_classifier_example_builds_and_runs(self):
        binary, ldd = self.built_example("flow_classifier", "flow_classifier")
        self.assertRegex(ldd, r"librte_net_cna\.so\.0 => (/usr)?/lib/x86_64-linux-gnu/librte_net_cna\.so\.0")
        flow_classifier.verify(self, flow_classifier.run_scenario(binary))

    def test_rdma_example_builds_and_runs(self):
        binary, ldd = self.built_example("rdma_hello", "rdma_hello")
        self.assertRegex(ldd, r"librte_rdma_cna\.so\.0 => (/usr)?/lib/x86_64-linux-gnu/librte_rdma_cna\.so\.0")
        rdma_hello.check_operations(self, binary)


if __name__ == "__main__":
    unittest.main()
