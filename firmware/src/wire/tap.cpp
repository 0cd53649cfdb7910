/* SPDX-License-Identifier: BSD-3-Clause */
#include "wire/tap.h"

#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/log.h"
#include "wire/port.h"

namespace cna::fw {

std::unique_ptr<TapWire> TapWire::open(const std::string& ifname, std::string* error)
{
    auto fail = [&](const std::string& why) {
        *error = "TAP interface " + ifname + ": " + why;
        return nullptr;
    };
    /* The kernel would silently truncate a longer name: another interface. */
    if (ifname.empty() || ifname.size() >= IFNAMSIZ)
        return fail("the name must have 1 to " + std::to_string(IFNAMSIZ - 1) + " characters");
    int fd = ::open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return fail(std::string("cannot open /dev/net/tun: ") + std::strerror(errno));
    ifreq ifr{};
    ifr.ifr_flags = IFF_TAP | IFF_NO_PI;
    std::memcpy(ifr.ifr_name, ifname.c_str(), ifname.size());
    if (::ioctl(fd, TUNSETIFF, &ifr) < 0) {
        int err = errno;
        ::close(fd);
        if (err == EINVAL)
            return fail("exists and is not a TAP interface");
        return fail(std::string("cannot attach: ") + std::strerror(err));
    }
    return std::unique_ptr<TapWire>(new TapWire(ifname, fd));
}

TapWire::~TapWire()
{
    ::close(fd_);
}

void TapWire::set_carrier(bool up)
{
    int on = up ? 1 : 0;
    if (!gone_.load(std::memory_order_relaxed) && ioctl(fd_, TUNSETCARRIER, &on) != 0)
        log(LogLevel::warning, "TAP interface %s: cannot set its carrier (%s)", name_.c_str(), std::strerror(errno));
}

bool TapWire::send(const uint8_t* frame, uint32_t len)
{
    return ::write(fd_, frame, len) == static_cast<ssize_t>(len);
}

void TapWire::deliver_one(Port& port, uint32_t len, RxEngine& rx)
{
    /* One at a time: every read reuses frame_. */
    burst_.clear();
    burst_.add(frame_, len);
    port.deliver(burst_, rx);
}

int TapWire::receive(Port& port, RxEngine& rx)
{
    int frames = 0;
    for (; frames < static_cast<int>(RX_BATCH); frames++) {
        ssize_t n = ::read(fd_, frame_, sizeof(frame_));
        if (n < 0) {
            if (errno == EAGAIN || errno == EINTR)
                break;
            return -errno;
        }
        if (n < static_cast<ssize_t>(ETH_HLEN) || n > static_cast<ssize_t>(MAX_FRAME))
            port.count_rx_error();
        else
            deliver_one(port, static_cast<uint32_t>(n), rx);
    }
    return frames;
}

} // namespace cna::fw
