/* SPDX-License-Identifier: BSD-3-Clause
 * net_cna's own API: a PF's administration of its VFs (SR-IOV), in the
 * manner of rte_pmd_ixgbe_set_vf_* and rte_pmd_i40e_*.
 *
 * A net_cna port probed with vfs=N has VFs 0..N-1, each driven by a
 * net_cna_vf port, in this process or another. These calls set the PF's
 * policy for a VF: the VF learns it from its bulletin board (forced MAC and
 * port VLAN, link state, trust, rate), the adapter enforces it on the VF's
 * traffic (anti-spoofing, port VLAN), and the PF holds the VF's requests to
 * it (a trusted VF alone may go promiscuous). Settings outlive the VF's
 * driver: a VF driver that comes later finds them.
 *
 * Every call returns 0 or a negative errno: -ENODEV when port_id is not a
 * net_cna PF of this (primary) process, -EINVAL for a VF it has not enabled
 * or a value out of range, -ENOTSUP in a secondary process, -EIO when the
 * adapter did not carry it out. They post ramrods and wait (bounded) for
 * their completion: call them from a control thread, never an lcore. Any
 * thread may: calls on a PF being closed wait for the close, then fail.
 *
 * The same operations are telemetry commands (dpdk-telemetry.py):
 *   /cna/vf/info,<port>,<vf>             the VF's settings and state
 *   /cna/vf/stats,<port>,<vf>            its statistics (since the last reset)
 *   /cna/vf/reset_stats,<port>,<vf>
 *   /cna/vf/set_mac,<port>,<vf>,<xx:xx:xx:xx:xx:xx>   (00:00:00:00:00:00: none)
 *   /cna/vf/set_vlan,<port>,<vf>,<0..4095>            (0: none)
 *   /cna/vf/set_spoofchk,<port>,<vf>,<0|1>
 *   /cna/vf/set_trust,<port>,<vf>,<0|1>
 *   /cna/vf/set_link_state,<port>,<vf>,<auto|up|down>
 *   /cna/vf/set_rate,<port>,<vf>,<Mbps>               (0: no limit)
 */
#ifndef RTE_PMD_CNA_H
#define RTE_PMD_CNA_H

#include <stdint.h>

#include <rte_ethdev.h>
#include <rte_ether.h>

#ifdef __cplusplus
extern "C" {
#endif

#define RTE_PMD_CNA_API __attribute__((visibility("default")))

enum rte_pmd_cna_vf_link_state {
	RTE_PMD_CNA_VF_LINK_AUTO = 0, /* the PF's port's link */
	RTE_PMD_CNA_VF_LINK_UP = 1,   /* up whatever the port's (VF-to-VF traffic) */
	RTE_PMD_CNA_VF_LINK_DOWN = 2, /* down, and the adapter cuts the VF off */
};

struct rte_pmd_cna_vf_info {
	uint8_t acquired;          /* a VF driver holds it */
	uint8_t malicious;         /* the adapter stopped it; its driver's reset recovers it */
	uint8_t mac_forced;
	uint8_t trusted;
	uint8_t spoofchk;
	uint8_t link_up;           /* as its bulletin says */
	uint16_t port_vlan;        /* 0: none */
	struct rte_ether_addr mac; /* forced, or the one it was given */
	enum rte_pmd_cna_vf_link_state link_state;
	uint32_t tx_rate_mbps;     /* 0: no limit */
	uint16_t rx_queues;        /* granted */
	uint16_t tx_queues;
	uint8_t vport_started;     /* its driver has started its port */
};

/* VFs the PF has enabled (devarg vfs=), in *count. */
RTE_PMD_CNA_API int rte_pmd_cna_get_vf_count(uint16_t port_id, uint16_t *count);
/* Forces the VF's MAC: its only one, which it cannot change; a zero
 * address lifts the force (the VF keeps its own from then on). */
RTE_PMD_CNA_API int rte_pmd_cna_set_vf_mac_addr(uint16_t port_id, uint16_t vf, const struct rte_ether_addr *mac);
/* The VF's port VLAN (1..4095, 0: none): the adapter tags its frames and
 * hands it only frames of that VLAN, untagged; the VF may not filter VLANs. */
RTE_PMD_CNA_API int rte_pmd_cna_set_vf_vlan(uint16_t port_id, uint16_t vf, uint16_t vlan_id);
/* Anti-spoofing: the VF's frames from any source MAC but its own are dropped
 * and counted (tx_spoofed in its statistics). */
RTE_PMD_CNA_API int rte_pmd_cna_set_vf_spoofchk(uint16_t port_id, uint16_t vf, uint8_t on);
/* A trusted VF may enable promiscuous and all-multicast Rx. */
RTE_PMD_CNA_API int rte_pmd_cna_set_vf_trust(uint16_t port_id, uint16_t vf, uint8_t on);
RTE_PMD_CNA_API int rte_pmd_cna_set_vf_link_state(uint16_t port_id, uint16_t vf,
						  enum rte_pmd_cna_vf_link_state state);
/* The VF's Tx rate limit in Mbps (0: none; at most the port's fastest
 * speed): the adapter holds the bytes of the frames the VF sends to it,
 * leaving the rest on the VF's Tx ring (never dropped), and announces it on
 * the VF's bulletin. */
RTE_PMD_CNA_API int rte_pmd_cna_set_vf_rate_limit(uint16_t port_id, uint16_t vf, uint32_t tx_rate_mbps);
/* The VF's traffic as the adapter counts it; oerrors includes the frames
 * anti-spoofing dropped. */
RTE_PMD_CNA_API int rte_pmd_cna_get_vf_stats(uint16_t port_id, uint16_t vf, struct rte_eth_stats *stats);
RTE_PMD_CNA_API int rte_pmd_cna_reset_vf_stats(uint16_t port_id, uint16_t vf);
/* Frames of the VF anti-spoofing dropped (since the last reset). */
RTE_PMD_CNA_API int rte_pmd_cna_get_vf_spoofed(uint16_t port_id, uint16_t vf, uint64_t *frames);
RTE_PMD_CNA_API int rte_pmd_cna_get_vf_info(uint16_t port_id, uint16_t vf, struct rte_pmd_cna_vf_info *info);

#ifdef __cplusplus
}
#endif

#endif /* RTE_PMD_CNA_H */
