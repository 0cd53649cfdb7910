/* SPDX-License-Identifier: BSD-3-Clause
 * The TAP wire: the kernel as a port's link partner. Each test creates the
 * TAP through the adapter, moves it into a network namespace of its own and
 * talks to the port from there with ordinary sockets, so the host's network
 * is never touched. Needs root and /dev/net/tun; skipped without them.
 */
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <optional>
#include <string>

#include "fake_driver.h"
#include "l2_fixture.h"

namespace cna::fw::test {
namespace {

using namespace hsi::eth;

const uint8_t PORT_MAC[6] = {0x02, 0x00, 0xc0, 0xa0, 0x00, 0x00}; /* PF 0 */
constexpr const char* KERNEL_IP = "10.77.0.1";
constexpr const char* PORT_IP = "10.77.0.2";

bool run(const std::string& command)
{
    return std::system((command + " >/dev/null 2>&1").c_str()) == 0;
}

/* An fd that belongs to the namespace ns: the socket is created there and
 * keeps it, whatever namespace the test thread is in afterwards. */
int socket_in(const std::string& ns, int domain, int type, int protocol)
{
    int own = ::open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
    int target = ::open(("/var/run/netns/" + ns).c_str(), O_RDONLY | O_CLOEXEC);
    int fd = -1;
    if (own >= 0 && target >= 0 && ::setns(target, CLONE_NEWNET) == 0) {
        fd = ::socket(domain, type | SOCK_CLOEXEC, protocol);
        EXPECT_EQ(::setns(own, CLONE_NEWNET), 0);
    }
    if (own >= 0)
        ::close(own);
    if (target >= 0)
        ::close(target);
    return fd;
}

/* The index of interface name in the namespace ns; 0 if there is none. */
int ifindex_in(const std::string& ns, const std::string& name)
{
    int probe = socket_in(ns, AF_INET, SOCK_DGRAM, 0);
    ifreq ifr{};
    std::snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name.c_str());
    int rc = probe >= 0 ? ::ioctl(probe, SIOCGIFINDEX, &ifr) : -1;
    if (probe >= 0)
        ::close(probe);
    return rc == 0 ? ifr.ifr_ifindex : 0;
}

class TapWireTest : public ::testing::Test {
protected:
    void SetUp() override
    {
        if (::geteuid() != 0 || ::access("/dev/net/tun", R_OK | W_OK) != 0)
            GTEST_SKIP() << "needs root and /dev/net/tun";
        ns_ = "cnatap" + std::to_string(::getpid());
        tap_ = ns_;
        if (!run("ip netns add " + ns_))
            GTEST_SKIP() << "cannot create a network namespace";
    }

    void TearDown() override
    {
        drv_.reset();
        adapter_.reset(); /* closes the fd: the TAP it created goes away */
        if (!ns_.empty())
            run("ip netns del " + ns_);
    }

    /* An adapter whose port 0 is wired to the TAP, the TAP in the namespace
     * with KERNEL_IP, and PF 0 up for traffic with link. */
    void bring_up()
    {
        AdapterConfig config;
        config.name = "tap";
        config.tap_names[0] = tap_;
        config.link_up_delay_ms = 0;
        std::string error;
        adapter_ = Adapter::create(config, &error);
        ASSERT_TRUE(adapter_) << error;
        ASSERT_TRUE(run("ip link set " + tap_ + " netns " + ns_));
        /* No IPv6 chatter (router solicitations) among the frames we look at. */
        run("ip netns exec " + ns_ + " sysctl -qw net.ipv6.conf." + tap_ + ".disable_ipv6=1");
        ASSERT_TRUE(run("ip -n " + ns_ + " addr add " + KERNEL_IP + "/24 dev " + tap_));
        ASSERT_TRUE(run("ip -n " + ns_ + " link set " + tap_ + " up"));
        drv_ = std::make_unique<FakeDriver>(*adapter_, 0);
        bring_up_l2(*drv_);
        ASSERT_TRUE(wait_link(*drv_));
    }

    /* The first frame received on queue 0 that satisfies match (the kernel
     * may send others); nullopt after the timeout. */
    std::optional<FakeDriver::RxFrame> rx_find(const std::function<bool(const FakeDriver::RxFrame&)>& match)
    {
        std::optional<FakeDriver::RxFrame> found;
        wait_until([&] {
            for (auto& f : drv_->rx_poll(0))
                received_.push_back(std::move(f));
            auto it = std::find_if(received_.begin(), received_.end(), match);
            if (it != received_.end())
                found = *it;
            return found.has_value();
        });
        return found;
    }

    std::string ns_, tap_;
    std::unique_ptr<Adapter> adapter_;
    std::unique_ptr<FakeDriver> drv_;
    std::vector<FakeDriver::RxFrame> received_;
};

TEST_F(TapWireTest, FramesTheAdapterSendsReachTheKernel)
{
    bring_up();
    int sock = socket_in(ns_, AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
    ASSERT_GE(sock, 0);
    sockaddr_ll where{};
    where.sll_family = AF_PACKET;
    where.sll_protocol = htons(ETH_P_ALL);
    where.sll_ifindex = ifindex_in(ns_, tap_);
    ASSERT_NE(where.sll_ifindex, 0);
    ASSERT_EQ(::bind(sock, reinterpret_cast<sockaddr*>(&where), sizeof(where)), 0);
    timeval timeout{2, 0};
    ::setsockopt(sock, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));

    auto sent = udp4_frame(BCAST, PORT_MAC, 0x0a4d0002, 0x0a4d0001, 4000, 5000, 300);
    drv_->send(0, sent);
    ASSERT_TRUE(drv_->wait_tx_done(0));
    bool seen = false;
    uint8_t buf[2048];
    for (ssize_t n; !seen && (n = ::recv(sock, buf, sizeof(buf), 0)) > 0;)
        seen = std::vector<uint8_t>(buf, buf + n) == sent;
    ::close(sock);
    EXPECT_TRUE(seen) << "the frame did not appear on the kernel side of " << tap_;
    PortCounters pc = adapter_->control().port_counters(0);
    EXPECT_EQ(pc.wire_tx_frames, 1u);
    EXPECT_EQ(pc.wire_tx_bytes, sent.size());
    EXPECT_EQ(pc.wire_tx_drops, 0u);
}

TEST_F(TapWireTest, DatagramsTheKernelSendsReachTheRxRing)
{
    bring_up();
    ASSERT_TRUE(run("ip -n " + ns_ + " neigh add " + PORT_IP + " lladdr 02:00:c0:a0:00:00 nud permanent dev " +
                    tap_));
    int sock = socket_in(ns_, AF_INET, SOCK_DGRAM, 0);
    ASSERT_GE(sock, 0);
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_port = htons(9999);
    ASSERT_EQ(::inet_pton(AF_INET, PORT_IP, &to.sin_addr), 1);
    const std::string payload = "hello from the kernel";
    ASSERT_EQ(::sendto(sock, payload.data(), payload.size(), 0, reinterpret_cast<sockaddr*>(&to), sizeof(to)),
              static_cast<ssize_t>(payload.size()));
    ::close(sock);

    auto frame = rx_find([&](const FakeDriver::RxFrame& f) {
        return f.data.size() >= 42 + payload.size() &&
               std::equal(payload.begin(), payload.end(), f.data.begin() + 42);
    });
    ASSERT_TRUE(frame) << "the datagram did not reach the Rx ring";
    EXPECT_TRUE(std::equal(PORT_MAC, PORT_MAC + 6, frame->data.begin()));
    uint16_t flags = frame->cqe.pars_flags;
    EXPECT_EQ(flags & pars::L3_MASK, pars::L3_IPV4);
    EXPECT_EQ(flags & pars::L4_MASK, pars::L4_UDP);
    EXPECT_TRUE(flags & pars::IP_CSUM_CHECKED);
    EXPECT_TRUE(flags & pars::L4_CSUM_CHECKED);
    EXPECT_FALSE(flags & (pars::IP_CSUM_BAD | pars::L4_CSUM_BAD));
    EXPECT_EQ(frame->cqe.pkt_len, frame->data.size());
    PortCounters pc = adapter_->control().port_counters(0);
    EXPECT_GE(pc.wire_rx_frames, 1u);
    EXPECT_GE(pc.wire_rx_bytes, frame->data.size());
}

TEST_F(TapWireTest, RawFramesTheKernelSendsArriveUnchanged)
{
    bring_up();
    int sock = socket_in(ns_, AF_PACKET, SOCK_RAW, 0);
    ASSERT_GE(sock, 0);
    sockaddr_ll to{};
    to.sll_family = AF_PACKET;
    to.sll_ifindex = ifindex_in(ns_, tap_);
    ASSERT_NE(to.sll_ifindex, 0);
    to.sll_halen = 6;
    std::copy(PORT_MAC, PORT_MAC + 6, to.sll_addr);

    auto tcp = tcp4_frame(PORT_MAC, PEER_MAC, 0x0a4d0001, 0x0a4d0002, 1234, 80, 100);
    auto bad = tcp4_frame(PORT_MAC, PEER_MAC, 0x0a4d0001, 0x0a4d0002, 1235, 80, 100);
    bad[60] ^= 0xff; /* payload: the TCP checksum is now wrong */
    for (const auto* f : {&tcp, &bad})
        ASSERT_EQ(::sendto(sock, f->data(), f->size(), 0, reinterpret_cast<sockaddr*>(&to), sizeof(to)),
                  static_cast<ssize_t>(f->size()));
    ::close(sock);

    auto good_rx = rx_find([&](const FakeDriver::RxFrame& f) { return f.data == tcp; });
    ASSERT_TRUE(good_rx);
    EXPECT_EQ(good_rx->cqe.pars_flags & pars::L4_MASK, pars::L4_TCP);
    EXPECT_TRUE(good_rx->cqe.pars_flags & pars::L4_CSUM_CHECKED);
    EXPECT_FALSE(good_rx->cqe.pars_flags & pars::L4_CSUM_BAD);
    auto bad_rx = rx_find([&](const FakeDriver::RxFrame& f) { return f.data == bad; });
    ASSERT_TRUE(bad_rx);
    EXPECT_TRUE(bad_rx->cqe.pars_flags & pars::L4_CSUM_BAD);
    EXPECT_GE(drv_->vport_stats(0).rx_ucast_pkts, 2u);
}

TEST_F(TapWireTest, PulledCarrierTakesTheLinkDown)
{
    bring_up();
    adapter_->control().set_carrier(0, false);
    ASSERT_TRUE(wait_until(
        [&] { return !(drv_->rd(hsi::mfw::port_addr(0)) & hsi::mfw::LINK_STATUS_LINK_UP); }));
    drv_->send(0, udp4_frame(BCAST, PORT_MAC, 1, 2, 3, 4, 64));
    ASSERT_TRUE(drv_->wait_tx_done(0));
    EXPECT_EQ(adapter_->control().port_counters(0).wire_tx_frames, 0u);
    adapter_->control().set_carrier(0, true);
    EXPECT_TRUE(wait_link(*drv_));
}

TEST_F(TapWireTest, ADeletedTapIsACablePulledOutForGood)
{
    bring_up();
    ASSERT_TRUE(run("ip -n " + ns_ + " link del " + tap_));
    /* No frame needs to arrive: the engine polls the fd, which reports the
     * interface gone. */
    ASSERT_TRUE(wait_until(
        [&] { return !(drv_->rd(hsi::mfw::port_addr(0)) & hsi::mfw::LINK_STATUS_LINK_UP); }));
    const uint64_t drops = adapter_->control().port_counters(0).wire_tx_drops;
    drv_->send(0, udp4_frame(BCAST, PORT_MAC, 1, 2, 3, 4, 64));
    ASSERT_TRUE(drv_->wait_tx_done(0));
    const PortCounters after = adapter_->control().port_counters(0);
    EXPECT_EQ(after.wire_tx_frames, 0u);
    EXPECT_EQ(after.wire_tx_drops, drops); /* dropped before the wire: no link */
}

TEST_F(TapWireTest, AJoiningPfGivesItsPortsTap)
{
    AdapterConfig config;
    config.name = "tapjoin";
    config.ports = 2;
    std::string error;
    adapter_ = Adapter::create(config, &error);
    ASSERT_TRUE(adapter_) << error;

    drv_ = std::make_unique<FakeDriver>(*adapter_, 0);
    ASSERT_NE(drv_->load(), 0u);
    EXPECT_FALSE(adapter_->attach_tap(0, tap_, &error)) << "port 0 has a loaded PF";
    EXPECT_NE(error.find("loaded"), std::string::npos) << error;

    ASSERT_TRUE(adapter_->attach_tap(1, tap_, &error)) << error;
    EXPECT_EQ(adapter_->config().tap_names[1], tap_);
    EXPECT_TRUE(run("ip link show " + tap_));
    EXPECT_FALSE(adapter_->attach_tap(1, tap_ + "b", &error));
    EXPECT_NE(error.find("already a tap"), std::string::npos) << error;
    EXPECT_FALSE(adapter_->attach_tap(2, tap_, &error));

    drv_.reset();
    adapter_.reset();
    EXPECT_FALSE(run("ip link show " + tap_)) << "the TAP the adapter created outlived it";
}

TEST_F(TapWireTest, InvalidTapConfigurationsAreRefused)
{
    AdapterConfig config;
    config.name = "tapbad";
    config.ports = 2;
    config.wire = Wire::cable;
    config.tap_names[0] = tap_;
    std::string error;
    EXPECT_FALSE(Adapter::create(config, &error));
    EXPECT_NE(error.find("cable pair"), std::string::npos) << error;

    config.wire = Wire::loopback;
    config.tap_names[0] = "a-name-much-too-long";
    EXPECT_FALSE(Adapter::create(config, &error));
    EXPECT_NE(error.find("1 to 15"), std::string::npos) << error;

    config.tap_names[0] = "lo"; /* exists, and is no TAP */
    EXPECT_FALSE(Adapter::create(config, &error));
    EXPECT_NE(error.find("not a TAP"), std::string::npos) << error;
}

} // namespace
} // namespace cna::fw::test
