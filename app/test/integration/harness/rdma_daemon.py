"""Verbs applications on cna's provider through cna-adapterd: two processes
on two PFs of one port (DaemonHosts), or on two VFs of one PF (VfHosts),
with their TCP exchange, if any, in the hosts' namespace.

    with VfHosts() as hosts:
        hosts.cm_pair(server_argv, client_argv)
"""
from harness.daemon import AdapterDaemon
from harness.rdma_cm import CmHosts
from harness.sriov import wire_tx_frames
from harness.testpmd import TestPmd, unique_tag
from harness.verbs import CLIENT_IP, SERVER_IP


class DaemonHosts(CmHosts):
    """The server on PF 0 of the daemon's adapter, the client on PF 1, both
    on its one port (a loopback wire), their RoCE switched inside it. Not
    two cabled ports: a port's link is up only while the cable's other end
    is loaded, and perftest's client, tried again until its server listens,
    would take the server's link down each time it gave up."""

    DAEMON_OPTIONS = ["--ports", "1", "--pfs-per-port", "2", "--wire", "loopback"]

    def __enter__(self):
        super().__enter__()
        self.daemon = AdapterDaemon(self.DAEMON_OPTIONS, build=self.build)
        self.daemon.start()
        return self

    def __exit__(self, *exc):
        if self.daemon.proc.poll() is None:
            self.daemon.stop()
        return super().__exit__(*exc)

    def devargs(self, role):
        pf, ip = (0, SERVER_IP) if role == "s" else (1, CLIENT_IP)
        return f"daemon={self.daemon.socket},pf={pf},ipv4={ip}/24"

    def wire_tx(self):
        return wire_tx_frames(self.daemon.socket, 0)


class VfHosts(DaemonHosts):
    """The server on VF 0, the client on VF 1, of PF 0 of the daemon's
    one-port adapter (a loopback wire), the PF in a testpmd of its own with
    the two VFs enabled."""

    DAEMON_OPTIONS = ["--ports", "1", "--wire", "loopback"]

    def __enter__(self):
        super().__enter__()
        self.pf = TestPmd([f"net_cna0,daemon={self.daemon.socket},pf=0,vfs=2"], build=self.build,
                          memory=["--no-huge", "-m", "256", "--file-prefix", f"{unique_tag()}pf"])
        self.pf.start()
        return self

    def __exit__(self, *exc):
        self.pf.close()
        return super().__exit__(*exc)

    def devargs(self, role):
        vf, ip = (0, SERVER_IP) if role == "s" else (1, CLIENT_IP)
        return f"daemon={self.daemon.socket},pf=0,vf={vf},ipv4={ip}/24"
