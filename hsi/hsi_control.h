/* SPDX-License-Identifier: BSD-3-Clause
 * The adapter's control interface: the operator and test back door of a
 * software adapter (in the spirit of Linux's netdevsim), beside the PCI
 * function. Link flaps, fault injection and adapter-side counters; every
 * backend of the PCI function carries these same types, so the host side
 * and the adapter never translate between mirrors of them.
 */
#pragma once

#include <cctype>
#include <cstdint>
#include <string_view>

namespace cna::hsi::control {

/* A port's wire: its own Rx (loopback), the other port of its pair (cable:
 * port 2k <-> port 2k+1) or a Linux TAP interface (tap: the kernel is the
 * link partner). */
enum class Wire : uint32_t { loopback = 0, cable = 1, tap = 2 };

/* A TAP wire's interface name as both sides take it: a Linux interface
 * name (IFNAMSIZ - 1 characters at most) of a portable character set. */
inline bool valid_tap_name(std::string_view name)
{
    if (name.empty() || name.size() > 15)
        return false;
    for (char c : name)
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-'))
            return false;
    return true;
}

/* Faults an adapter can be told to simulate, as bits of a fault set. */
enum class Fault : uint32_t {
    none = 0,
    mfw_silent = 1u << 0,  /* the MFW never answers the mailbox */
    fw_assert = 1u << 1,   /* storms assert (FW_ASSERT attention) */
    lose_ramrod = 1u << 2, /* the next ramrod is consumed but never completed */
    dma_fault = 1u << 3,   /* the IOMMUs translate nothing: every DMA faults */
};

/* The faults by the name every interface (devargs, daemon and
 * adapterctl options) gives them. */
struct NamedFault {
    std::string_view name;
    Fault fault;
};
inline constexpr NamedFault FAULTS[] = {{"mfw_silent", Fault::mfw_silent},
                                        {"fw_assert", Fault::fw_assert},
                                        {"lose_ramrod", Fault::lose_ramrod},
                                        {"dma_fault", Fault::dma_fault}};
inline constexpr std::string_view FAULT_NAMES = "mfw_silent, fw_assert, lose_ramrod or dma_fault";

/* Fault::none for a name that is none of them. */
inline Fault fault_named(std::string_view name)
{
    for (const NamedFault& f : FAULTS)
        if (f.name == name)
            return f.fault;
    return Fault::none;
}

inline std::string_view fault_name(Fault fault)
{
    for (const NamedFault& f : FAULTS)
        if (f.fault == fault)
            return f.name;
    return "none";
}

/* A port's counters on the adapter side of its wire. */
struct PortCounters {
    uint64_t wire_tx_frames, wire_tx_bytes;
    uint64_t wire_rx_frames, wire_rx_bytes;
    uint64_t link_changes;
    uint64_t wire_tx_drops;  /* the wire could not take the frame (a TAP's kernel queue full) */
    uint64_t wire_rx_errors; /* frames from the wire the MAC rejects (runt, longer than the maximum) */
    uint64_t wire_roce_lost; /* RoCE frames the wire lost on purpose (AdapterControl::set_roce_loss) */
};
static_assert(sizeof(PortCounters) == 64);

/* The control interface itself, declared once: the adapter implements it,
 * and every backend of the host's PCI function gives one (the embedded
 * adapter's own, the daemon's over its socket). */
class AdapterControl {
public:
    virtual ~AdapterControl() = default;
    /* Pull or plug the cable of a port: carrier changes as on a real wire. */
    virtual void set_carrier(uint32_t port, bool present) = 0;
    virtual void inject(Fault fault, bool on) = 0;
    /* The wire of a port loses this many RoCEv2 frames in a million that
     * the port sends (0: none), at random: for the transport's recovery. */
    virtual void set_roce_loss(uint32_t port, uint32_t per_million) = 0;
    virtual PortCounters port_counters(uint32_t port) const = 0;
    virtual uint64_t dma_faults(uint32_t pf) const = 0;
    /* The port's PTP clock (hsi_ptp.h) as its PFs read it, and a step of
     * it as their STEP registers make one: what puts a PTP client's clock
     * off its master's, to see it steer back. */
    virtual uint64_t ptp_time(uint32_t port) const = 0;
    virtual void ptp_step(uint32_t port, int64_t delta) = 0;
    /* other's clock minus port's, both read at one instant: how far two
     * ports' clocks are apart, which no exchange of frames can tell
     * exactly (a cable's asymmetry). */
    virtual int64_t ptp_offset(uint32_t port, uint32_t other) const = 0;
    /* A cable's length in time: frames the port sends reach the other end
     * delay_ns + asymmetry_ns later, and frames it receives took delay_ns -
     * asymmetry_ns (IEEE 1588's delayAsymmetry, the port the master's end);
     * on a loopback wire, delay_ns. false, with nothing changed, when the
     * port's wire is a TAP, a delay would be negative or longer than
     * MAX_CABLE_DELAY_NS. */
    static constexpr uint64_t MAX_CABLE_DELAY_NS = 10'000'000;
    /* A delay and an asymmetry any cable takes: neither way negative, nor
     * longer than MAX_CABLE_DELAY_NS. */
    static constexpr bool cable_delay_valid(uint64_t delay_ns, int64_t asymmetry_ns)
    {
        const uint64_t skew = asymmetry_ns < 0 ? 0 - static_cast<uint64_t>(asymmetry_ns)
                                               : static_cast<uint64_t>(asymmetry_ns);
        return delay_ns <= MAX_CABLE_DELAY_NS && skew <= delay_ns;
    }
    virtual bool set_cable_delay(uint32_t port, uint64_t delay_ns, int64_t asymmetry_ns) = 0;
};

} // namespace cna::hsi::control
