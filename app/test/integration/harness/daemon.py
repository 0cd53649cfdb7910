"""cna-adapterd, the adapter as a daemon, for tests that attach net_cna
ports of several processes to one adapter:

    with AdapterDaemon(["--ports", "2", "--wire", "cable"]) as d:
        TestPmd([f"net_cna0,daemon={d.socket},pf=0"]) ...
"""
import os
import signal
import subprocess
import tempfile
import time

from harness.testpmd import TestPmdError, build_dir, daemon_path


def adapterctl(socket, *command, build=None, check=True):
    """cna-adapterctl's output for `command` on the daemon at `socket`."""
    run = subprocess.run([os.path.join(build or build_dir(), "transport", "cna-adapterctl"), "--socket", socket,
                          *command], capture_output=True, text=True, timeout=10)
    if check and run.returncode != 0:
        raise TestPmdError(f"cna-adapterctl {' '.join(command)} failed ({run.returncode}): {run.stderr}")
    return run.stdout + run.stderr


class AdapterDaemon:
    def __init__(self, options=(), build=None):
        self.dir = tempfile.mkdtemp(prefix="cna-adapterd-")
        self.socket = os.path.join(self.dir, "adapter.sock")
        self.log_path = os.path.join(self.dir, "adapterd.log")
        self.argv = [daemon_path(build), "--socket", self.socket, "--log-level", "info", *options]
        self.proc = None

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        if self.proc is not None and self.proc.poll() is None:
            self.stop()

    def start(self, timeout=10):
        self.log = open(self.log_path, "w+")
        self.proc = subprocess.Popen(self.argv, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout
        while "serving on" not in self.output():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise TestPmdError(f"cna-adapterd did not start:\n{self.output()}")
            time.sleep(0.05)

    def output(self):
        with open(self.log_path) as f:
            return f.read()

    def stop(self, timeout=10):
        """SIGTERM; its exit status."""
        self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout)
        finally:
            self.log.close()

    def kill(self):
        """SIGKILL, as the OOM killer or a crash ends it: no clean-up of its own."""
        self.proc.kill()
        self.proc.wait(10)
        self.log.close()

    def open_fds(self):
        return len(os.listdir(f"/proc/{self.proc.pid}/fd"))

    def rss_kb(self):
        with open(f"/proc/{self.proc.pid}/status") as f:
            return int(next(line.split()[1] for line in f if line.startswith("VmRSS:")))
