/* SPDX-License-Identifier: BSD-3-Clause
 * cna-adapterctl: the operator's and the tests' back door into the adapter
 * cna-adapterd serves (netdevsim's, for a software adapter): its PFs and
 * their clients, the link of a port, faults, the wire's counters. It speaks
 * the daemon's transport (daemon_protocol.h) without attaching any PF.
 */
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>

#include "daemon/daemon_connection.h"

namespace {

using namespace cna::transport::daemon;
using cna::hsi::control::Fault;

const char USAGE[] =
    "usage: cna-adapterctl --socket PATH COMMAND\n"
    "  status                          the PFs and their VFs (a VF's client may be a VM), ports and clients\n"
    "  carrier PORT up|down            plug or pull the port's cable\n"
    "  fault NAME on|off               mfw_silent, fw_assert, lose_ramrod or dma_fault\n"
    "  roce-loss PORT PER_MILLION      RoCE frames the port's wire loses\n"
    "  counters PORT                   the port's wire counters\n"
    "  dma-faults PF                   the PF's DMA faults\n"
    "  ptp-time PORT                   the port's PTP clock (s.ns)\n"
    "  ptp-step PORT NS                steps the port's PTP clock by NS (signed) nanoseconds\n"
    "  ptp-offset PORT OTHER           OTHER's PTP clock minus PORT's, read at one instant (ns)\n"
    "  cable-delay PORT NS [ASYM]      frames PORT sends take NS+ASYM ns over its cable, those it\n"
    "                                  receives NS-ASYM (0 <= |ASYM| <= NS <= 10000000)\n";

int fail(const std::string& why)
{
    std::fprintf(stderr, "cna-adapterctl: %s\n", why.c_str());
    return 1;
}

bool number(const char* text, uint32_t* value)
{
    char* end;
    const unsigned long v = std::strtoul(text, &end, 0);
    *value = static_cast<uint32_t>(v);
    return *text != '\0' && *end == '\0' && v <= UINT32_MAX;
}

bool signed_number(const char* text, int64_t* value)
{
    char* end;
    errno = 0;
    *value = std::strtoll(text, &end, 0);
    return *text != '\0' && *end == '\0' && errno == 0;
}

using Connection = cna::adapterd::DaemonConnection;

int status(Connection& c)
{
    StatusReply r{};
    if (int rc = c.request(MsgType::status, nullptr, 0, &r, sizeof r); rc != 0)
        return fail(std::string("status: ") + std::strerror(-rc));
    std::printf("adapter %s: %u port(s), %u PF(s)\n", c.hello().adapter, r.ports, r.functions);
    for (uint32_t i = 0; i < r.functions && i < std::size(r.pfs); i++) {
        if (r.pfs[i].client_pid != 0)
            std::printf("pf%u  port %u  client pid %u\n", r.pfs[i].pf, r.pfs[i].port, r.pfs[i].client_pid);
        else
            std::printf("pf%u  port %u  free\n", r.pfs[i].pf, r.pfs[i].port);
    }
    for (uint32_t i = 0; i < r.vfs && i < std::size(r.vf_status); i++) {
        const VfStatus& v = r.vf_status[i];
        if (v.client_pid != 0)
            std::printf("pf%u vf%u  client pid %u%s\n", v.pf, v.vf, v.client_pid,
                        v.flags & VF_STATUS_VM ? " (a VM)" : "");
        else
            std::printf("pf%u vf%u  free\n", v.pf, v.vf);
    }
    return 0;
}

int control(Connection& c, ControlOp op, uint32_t port, uint32_t value, uint32_t arg, ControlReply* r)
{
    const Control req{static_cast<uint32_t>(op), port, value, arg};
    if (int rc = c.request(MsgType::control, &req, sizeof req, r, sizeof *r); rc != 0)
        return fail(std::strerror(-rc));
    return 0;
}

int cable_delay(Connection& c, uint32_t port, uint32_t delay_ns, int64_t asymmetry_ns)
{
    if (!cna::hsi::control::AdapterControl::cable_delay_valid(delay_ns, asymmetry_ns))
        return fail("a cable's delay is 0 to 10000000 ns, its asymmetry no more than the delay either way");
    const Control req{static_cast<uint32_t>(ControlOp::set_cable_delay), port, delay_ns,
                      static_cast<uint32_t>(static_cast<int32_t>(asymmetry_ns))};
    ControlReply r{};
    if (int rc = c.request(MsgType::control, &req, sizeof req, &r, sizeof r); rc != 0)
        return fail(rc == -EINVAL ? "port " + std::to_string(port) +
                                        " takes no such delay (its wire is a TAP, an asymmetry on a loopback wire, "
                                        "or no such port)"
                                  : std::strerror(-rc));
    return 0;
}

int run(Connection& c, int argc, char** argv)
{
    const std::string_view cmd = argv[0];
    ControlReply r{};
    uint32_t a = 0, b = 0;
    if (cmd == "status" && argc == 1)
        return status(c);
    if (cmd == "carrier" && argc == 3 && number(argv[1], &a) &&
        (std::string_view(argv[2]) == "up" || std::string_view(argv[2]) == "down"))
        return control(c, ControlOp::set_carrier, a, std::string_view(argv[2]) == "up", 0, &r);
    if (cmd == "fault" && argc == 3 && cna::hsi::control::fault_named(argv[1]) != Fault::none &&
        (std::string_view(argv[2]) == "on" || std::string_view(argv[2]) == "off"))
        return control(c, ControlOp::inject, 0, static_cast<uint32_t>(cna::hsi::control::fault_named(argv[1])),
                       std::string_view(argv[2]) == "on", &r);
    if (cmd == "roce-loss" && argc == 3 && number(argv[1], &a) && number(argv[2], &b))
        return control(c, ControlOp::set_roce_loss, a, b, 0, &r);
    if (cmd == "counters" && argc == 2 && number(argv[1], &a)) {
        if (int rc = control(c, ControlOp::port_counters, a, 0, 0, &r); rc != 0)
            return rc;
        const auto& p = r.counters;
        std::printf("port %u: wire_tx_frames %" PRIu64 " wire_tx_bytes %" PRIu64 " wire_rx_frames %" PRIu64
                    " wire_rx_bytes %" PRIu64 " link_changes %" PRIu64 " wire_tx_drops %" PRIu64
                    " wire_rx_errors %" PRIu64 " wire_roce_lost %" PRIu64 "\n",
                    a, p.wire_tx_frames, p.wire_tx_bytes, p.wire_rx_frames, p.wire_rx_bytes, p.link_changes,
                    p.wire_tx_drops, p.wire_rx_errors, p.wire_roce_lost);
        return 0;
    }
    if (cmd == "dma-faults" && argc == 2 && number(argv[1], &a)) {
        if (int rc = control(c, ControlOp::dma_faults, 0, a, 0, &r); rc != 0)
            return rc;
        std::printf("pf%u: %" PRIu64 " DMA fault(s)\n", a, r.value);
        return 0;
    }
    if (cmd == "ptp-time" && argc == 2 && number(argv[1], &a)) {
        if (int rc = control(c, ControlOp::ptp_time, a, 0, 0, &r); rc != 0)
            return rc;
        std::printf("port %u: ptp time %" PRIu64 ".%09" PRIu64 "\n", a, r.value / 1'000'000'000, r.value % 1'000'000'000);
        return 0;
    }
    int64_t step = 0;
    if (cmd == "ptp-step" && argc == 3 && number(argv[1], &a) && signed_number(argv[2], &step)) {
        const auto bits = static_cast<uint64_t>(step);
        return control(c, ControlOp::ptp_step, a, static_cast<uint32_t>(bits), static_cast<uint32_t>(bits >> 32), &r);
    }
    if (cmd == "ptp-offset" && argc == 3 && number(argv[1], &a) && number(argv[2], &b)) {
        if (int rc = control(c, ControlOp::ptp_offset, a, b, 0, &r); rc != 0)
            return rc;
        std::printf("port %u - port %u: %" PRId64 " ns\n", b, a, static_cast<int64_t>(r.value));
        return 0;
    }
    int64_t asymmetry = 0;
    if (cmd == "cable-delay" && (argc == 3 || argc == 4) && number(argv[1], &a) && number(argv[2], &b) &&
        (argc == 3 || signed_number(argv[3], &asymmetry)))
        return cable_delay(c, a, b, asymmetry);
    std::fputs(USAGE, stderr);
    return 2;
}

} // namespace

int main(int argc, char** argv)
{
    if (argc < 4 || std::string_view(argv[1]) != "--socket") {
        std::fputs(USAGE, stderr);
        return 2;
    }
    Connection c;
    if (std::string err = c.open(argv[2]); !err.empty())
        return fail(err);
    return run(c, argc - 3, argv + 3);
}
