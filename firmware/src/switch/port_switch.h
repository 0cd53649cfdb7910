/* SPDX-License-Identifier: BSD-3-Clause
 * The port's side of its functions: which engine a frame from the wire
 * goes to (RoCEv2 or L2), and the switch between the port's functions.
 */
#pragma once

#include <array>
#include <memory>
#include <span>

#include "base/clock.h"
#include "frame/frame_burst.h"
#include "l2/rx.h"
#include "switch/eswitch.h"
#include "wire/port.h"

namespace cna::fw {

class FunctionList;
class Storms;
namespace roce {
class RoceFirmware;
class RoceList;
}

/* What a port does with the frames its wire delivers, on the Rx engine of
 * the pass that delivers them: they go to the functions on the port while
 * the storms run — RoCEv2 to the RoCE firmware of the function whose RDMA
 * MAC they are sent to, the rest to L2. RoCEv2 one function of the port sends
 * to another's RDMA MAC reaches it without leaving the adapter.
 *
 * L2 frames between the port's functions and its wire: in legacy mode,
 * once a PF of the port has VFs, the port is a MAC switch (a VEB), and
 * frames a function sends to another function of the port reach it the
 * same way. In switchdev mode (EmbeddedSwitch) the frames of the managing
 * PF, of its VFs and from the wire go where the transfer rules say, or to
 * a representor. */
class PortSwitch final : public FrameReceiver, public LocalSwitch {
public:
    PortSwitch(const roce::RoceList& roce, const FunctionList& functions, const Storms& storms,
               EmbeddedSwitch& eswitch, PassClock& clock);
    void receive(const FrameBurst& burst, RxEngine& rx) override;
    const FrameBurst& switch_frames(const FrameBurst& sent, const void* source, uint32_t source_vport,
                                    FrameBurst& uplink, RxEngine& rx) override;
    /* Engine: the RoCE frames `source` sent. Those for another RoCE
     * firmware of the port are handed to it; returns those for the wire
     * (`sent` itself, or `uplink` filled). */
    const FrameBurst& switch_roce(const FrameBurst& sent, const roce::RoceFirmware& source, FrameBurst& uplink);

private:
    /* The RoCE firmware a RoCEv2 frame is for, nullptr for L2. */
    roce::RoceFirmware* roce_owner(const WireFrame& f) const;
    /* Whether a unicast frame is for a function of the port other than its
     * sender: one of its active vports has its destination as a MAC filter. */
    bool addressed_here(const WireFrame& f, const void* source) const;
    /* Whether some of the frame goes to the port's functions. */
    bool switched(const WireFrame& f, const void* source) const;
    /* L2 frames to the port's functions: by the rules in switchdev mode. */
    void receive_l2(const FrameBurst& burst, RxEngine& rx);

    /* switchdev: each frame from endpoint `source` looked up in the rules,
     * changed as its rule says, and delivered; frames for the wire join
     * uplink (nullptr: they came from it, and go nowhere). */
    void forward(const FrameBurst& burst, uint16_t source, FrameBurst* uplink, RxEngine& rx);
    /* The frames of a burst that go to one endpoint, in their order. */
    struct Route {
        uint16_t destination;
        FrameBurst frames;
    };
    FrameBurst& route(uint16_t destination);
    void deliver(uint16_t destination, const FrameBurst& frames, FrameBurst* uplink, RxEngine& rx);

    const roce::RoceList& roce_; /* of the port's functions */
    const FunctionList& functions_;
    const Storms& storms_;
    EmbeddedSwitch& eswitch_;
    PassClock& clock_; /* the port group's dataplane's */
    FrameBurst l2_;    /* a burst's L2 frames, when some were RoCE */
    FrameBurst local_; /* a sent burst's frames for the port's functions */
    std::array<Route, FrameBurst::MAX> routes_;
    uint32_t route_count_ = 0;
    /* The frames rules changed, a REWRITE_MAX slot per frame of a burst:
     * from the wire, and from the port's functions apart, since a loopback
     * wire brings the second's back while they are still in use. */
    std::unique_ptr<uint8_t[]> rewritten_rx_;
    std::unique_ptr<uint8_t[]> rewritten_tx_;
};

} // namespace cna::fw
