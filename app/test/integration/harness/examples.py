"""DPDK's examples as Debian ships their sources (package dpdk-doc, under
/usr/share/dpdk/examples), built unmodified with their own Makefiles
(pkg-config libdpdk) into <build>/examples/<name>/."""
import os
import shutil
import subprocess

from .testpmd import TestPmdError, build_dir

EXAMPLES = "/usr/share/dpdk/examples"


def build_example(name, build=None):
    """Copy the example's sources (and the examples' common headers) into
    <build>/examples and make it; returns the binary. Rebuilt only when
    missing."""
    root = os.path.join(os.path.abspath(build or build_dir()), "examples")
    binary = os.path.join(root, name, "build", name)
    if os.path.exists(binary):
        return binary
    if not os.path.isdir(os.path.join(EXAMPLES, name)):
        raise TestPmdError(f"{EXAMPLES}/{name} missing: install dpdk-doc")
    os.makedirs(root, exist_ok=True)
    for d in (name, "common"):
        if os.path.isdir(os.path.join(EXAMPLES, d)):
            shutil.copytree(os.path.join(EXAMPLES, d), os.path.join(root, d), dirs_exist_ok=True)
    proc = subprocess.run(["make", "-C", os.path.join(root, name), f"-j{os.cpu_count() or 2}"],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if proc.returncode != 0 or not os.path.exists(binary):
        raise TestPmdError(f"building {name} failed:\n" + proc.stdout[-4000:])
    return binary
