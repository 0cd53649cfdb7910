"""What the integration tests drive and share: Debian's testpmd under
pexpect (testpmd), the raw-socket helper run inside network namespaces
(nsio), l3fwd built from Debian's examples (l3fwd) and DPDK secondary
processes (secondary)."""
