"""meson install (what ./cna install runs), into a staging root: the net
PMD where the installed DPDK's EAL loads drivers from, its names in the
library directory leading to it, the RDMA PMD, the headers and pkg-config
modules an application builds with, the daemon with its unit and
configuration, the firmware, the man pages, the documentation and the
examples."""
import json
import os
import subprocess
import tempfile
import unittest

from harness.testpmd import build_dir, eal_driver_dir


def meson_option(build, name):
    out = subprocess.run(["meson", "introspect", "--buildoptions", build], stdout=subprocess.PIPE, text=True,
                         check=True).stdout
    return next(o["value"] for o in json.loads(out) if o["name"] == name)


class MesonInstall(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.build = os.path.abspath(build_dir())
        cls.root = tempfile.mkdtemp(prefix="cna-install-")
        proc = subprocess.run(["meson", "install", "-C", cls.build, "--no-rebuild", "--destdir", cls.root],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300)
        if proc.returncode != 0:
            raise AssertionError("meson install failed:\n" + proc.stdout)
        cls.prefix = meson_option(cls.build, "prefix")
        cls.libdir = os.path.join(cls.prefix, meson_option(cls.build, "libdir"))

    @classmethod
    def tearDownClass(cls):
        subprocess.run(["rm", "-rf", cls.root], check=False)

    def staged(self, path):
        return os.path.join(self.root, path.lstrip("/"))

    def resolve(self, path):
        """A staged link followed the way the installed system would."""
        for _ in range(8):
            staged = self.staged(path)
            if not os.path.islink(staged):
                return path
            target = os.readlink(staged)
            path = target if target.startswith("/") else os.path.normpath(os.path.join(os.path.dirname(path), target))
        raise AssertionError(f"link loop at {path}")

    def test_pmd_in_the_eal_driver_directory(self):
        pmd_dir = eal_driver_dir()
        real = os.path.join(pmd_dir, "librte_net_cna.so.0.1.0")
        self.assertTrue(os.path.isfile(self.staged(real)), real)
        for name in ("librte_net_cna.so.0", "librte_net_cna.so"):
            self.assertEqual(self.resolve(os.path.join(pmd_dir, name)), real)
            self.assertEqual(self.resolve(os.path.join(self.libdir, name)), real,
                             "the library directory's name leads to the EAL's file")
        soname = subprocess.run(["objdump", "-p", self.staged(real)], stdout=subprocess.PIPE, text=True).stdout
        self.assertRegex(soname, r"SONAME\s+librte_net_cna\.so\.0\b")
        exported = subprocess.run(["nm", "-D", "--defined-only", self.staged(real)], stdout=subprocess.PIPE,
                                  text=True).stdout
        names = {line.split()[-1].split("@")[0] for line in exported.splitlines() if line.split()[1] != "A"}
        self.assertTrue(names, exported)
        self.assertEqual({n for n in names if not n.startswith("rte_pmd_cna_")}, {"cna_net_driver_serving"},
                         "only rte_pmd_cna.h's API and the copy flag are exported")

    def test_rdma_pmd_headers_and_pkg_config(self):
        self.assertEqual(self.resolve(os.path.join(self.libdir, "librte_rdma_cna.so")),
                         os.path.join(self.libdir, "librte_rdma_cna.so.0.1.0"))
        include = os.path.join(self.prefix, meson_option(self.build, "includedir"), "cna")
        for header in ("rte_pmd_cna.h", "cna_rdma.h"):
            self.assertTrue(os.path.isfile(self.staged(os.path.join(include, header))), header)
        env = dict(os.environ, PKG_CONFIG_PATH=self.staged(os.path.join(self.libdir, "pkgconfig")),
                   PKG_CONFIG_SYSROOT_DIR=self.root)
        for module, lib in (("cna-net", "-lrte_net_cna"), ("cna-rdma", "-lrte_rdma_cna")):
            flags = subprocess.run(["pkg-config", "--cflags", "--libs", "libdpdk", module], stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, text=True, env=env)
            self.assertEqual(flags.returncode, 0, flags.stdout)
            words = flags.stdout.split()
            self.assertIn(lib, words)
            self.assertIn("-I" + self.staged(include), words)
            self.assertIn("-L" + self.staged(self.libdir), words)
            self.assertIn("-lrte_ethdev", words, "Requires: libdpdk")

    def test_daemon_unit_configuration_firmware_and_pages(self):
        sbindir = os.path.join(self.prefix, meson_option(self.build, "sbindir"))
        sysconfdir = os.path.join(self.prefix, meson_option(self.build, "sysconfdir"))
        bindir = os.path.join(self.prefix, meson_option(self.build, "bindir"))
        for program in (os.path.join(sbindir, "cna-adapterd"), os.path.join(bindir, "cna-adapterctl"),
                        os.path.join(bindir, "cna-vm")):
            self.assertTrue(os.access(self.staged(program), os.X_OK), program)
        units = [os.path.join(d, f) for d, _, files in os.walk(self.root) for f in files if f == "cna-adapterd.service"]
        self.assertEqual(len(units), 1, units)
        with open(units[0]) as f:
            unit = f.read()
        conf = os.path.join(sysconfdir, "cna", "adapterd.conf")
        self.assertIn(f"ExecStart={sbindir}/cna-adapterd --config {conf}\n", unit)
        self.assertNotIn("@", unit, "every placeholder substituted")
        self.assertTrue(os.path.isfile(self.staged(conf)))
        # The staged daemon accepts its own configuration.
        check = subprocess.run([self.staged(os.path.join(sbindir, "cna-adapterd")), "--config", self.staged(conf),
                                "--help"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.assertIn("--config", check.stdout)
        self.assertTrue(os.path.isfile(self.staged("/lib/firmware/cna/cna_fw.bin")))
        mandir = os.path.join(self.prefix, meson_option(self.build, "mandir"))
        for page in ("man8/cna-adapterd.8", "man8/cna-adapterctl.8", "man1/cna-vm.1"):
            self.assertTrue(os.path.isfile(self.staged(os.path.join(mandir, page))), page)

    def test_documentation_and_examples(self):
        docs = [os.path.join(d, f) for d, _, files in os.walk(self.root) for f in files]
        for wanted in ("/cna.md", "/architecture.md", "/hsi.md", "/performance.md", "/features/cna.ini",
                       "/examples/flow_classifier/Makefile", "/examples/flow_classifier/flow_classifier.cpp",
                       "/examples/rdma_hello/Makefile", "/examples/rdma_hello/rdma_hello.c"):
            self.assertTrue(any(p.endswith(wanted) for p in docs), wanted)
        self.assertFalse(any(p.endswith("/meson.build") for p in docs), "the examples' in-tree build stays home")


if __name__ == "__main__":
    unittest.main()
