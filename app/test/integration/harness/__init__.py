"""What the integration tests drive and share: Debian's testpmd under
pexpect (testpmd), the raw-socket helper run inside network namespaces
(nsio), l3fwd built from Debian's examples (l3fwd), DPDK secondary
processes (secondary), cna-adapterd (daemon), SR-IOV rigs of a PF and its
VFs (sriov) and testpmd in a QEMU guest on a VF (guest)."""
