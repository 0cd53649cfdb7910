/* SPDX-License-Identifier: BSD-3-Clause
 * Device arguments of net_cna (--vdev net_cnaN,key=value,...).
 */
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <rte_ether.h>

#include "hsi_control.h"
#include "hsi_switch.h"

namespace cna::net {

using hsi::control::Fault;
using hsi::control::Wire;

/* `inline_`: `inline` is taken. */
enum class EnginePlacement { threads, inline_, service };

struct Devargs {
    /* cna-adapterd's socket: the port is PF `port` (devarg pf=) of the
     * daemon's adapter; empty: an embedded adapter. */
    std::string daemon;
    std::string adapter;     /* embedded adapter to create or join; default: the device name */
    uint32_t ports = 1;      /* ports of a newly created adapter */
    bool ports_given = false;
    uint32_t port = 0;       /* adapter port (= PF) this ethdev drives */
    Wire wire = Wire::loopback;
    bool wire_given = false;
    std::string tap_name;    /* wire=tap:<ifname>: the TAP interface of this ethdev's port */
    /* The port's MAC, instead of the one the adapter's MFW gives its PF. */
    std::optional<rte_ether_addr> mac;
    std::string fw_file;     /* firmware image file; empty: the compiled-in image */
    Fault fault = Fault::none; /* test only: simulated by the embedded adapter from power-on */
    /* Test only: RoCE frames the port's wire loses on transmit, per million. */
    uint32_t roce_loss_ppm = 0;
    /* Where a newly created embedded adapter runs its dataplane: its own
     * engine threads, the port's polling lcores (engine=inline: a Tx burst
     * serves its doorbell, an Rx poll that finds nothing gives the adapter
     * a pass), or a DPDK service on the service cores EAL's -s gives. */
    EnginePlacement engine = EnginePlacement::threads;
    bool engine_given = false; /* else a joined adapter's placement is taken as it is */
    /* Engine threads of a newly created adapter, and the CPU of each (one
     * per thread; empty: not pinned). With inline or service, the one
     * thread left is the slowpath's. */
    uint32_t engine_threads = 1;
    std::vector<uint32_t> engine_cpus;
    /* RoCE on the port (its RDMA device, pmd/rdma): the adapter keeps QP
     * and MR contexts, and a status block for the CNQ, for it. */
    bool rdma = true;
    /* The port's addresses for RoCEv2 (GIDs 1.. of its RDMA device). */
    struct IpAddress {
        std::array<uint8_t, 16> addr{}; /* IPv4: the last four bytes, as an IPv4-mapped GID */
        uint8_t prefix = 0;
    };
    std::optional<IpAddress> ipv4;
    std::optional<IpAddress> ipv6;
    /* net_cna: the VFs the PF enables at probe (SR-IOV). */
    uint32_t vfs = 0;
    /* net_cna: the VFs whose representors the PF's process gets (DPDK's
     * representor= syntax, VF representors only), in ascending order; any
     * puts the port's switch in switchdev mode. */
    std::vector<uint16_t> representors;
    /* Its table's size: transfer rules the switch holds at once. */
    uint32_t switch_rules = hsi::eswitch::MAX_RULES;
    /* net_cna_vf: the VF of PF `port` this ethdev drives. */
    bool is_vf = false;
    uint32_t vf = 0;
};

/* The devargs keys, for RTE_PMD_REGISTER_PARAM_STRING and the user guide. */
#define CNA_DEVARGS_PARAM_STRING                                                                  \
    "daemon=<socket path> pf=<int> " \
    "adapter=<name> ports=<1|2|4> port=<int> wire=<loopback|cable|tap:<ifname>> mac=<xx:xx:xx:xx:xx:xx> " \
    "fw_file=<path> " \
    "fault=<mfw_silent|fw_assert|lose_ramrod|dma_fault> roce_loss=<per-million> engine=<threads|inline|service> " \
    "engine_threads=<int> " \
    "engine_cpu=<int|[int,...]> rdma=<0|1> ipv4=<a.b.c.d/len> ipv6=<addr/len> vfs=<int> " \
    "representor=<[list]|vf[list]|pf0vf[list]> switch_rules=<int>"
/* net_cna_vf's: a VF of a daemon's PF, or of a PF of an embedded adapter
 * of this process. */
#define CNA_VF_DEVARGS_PARAM_STRING \
    "daemon=<socket path> pf=<int> adapter=<name> port=<int> vf=<int> rdma=<0|1> ipv4=<a.b.c.d/len> ipv6=<addr/len>"

/* Parses args (may be null or empty). On error returns -EINVAL with a message
 * naming the offending key and value in *error. */
int parse_devargs(const char* device_name, const char* args, Devargs* out, std::string* error);
/* The same for net_cna_vf, whose devargs name the VF (vf= is required). */
int parse_vf_devargs(const char* device_name, const char* args, Devargs* out, std::string* error);

} // namespace cna::net
