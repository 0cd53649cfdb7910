/* SPDX-License-Identifier: BSD-3-Clause
 * libFuzzer: everything a host can write to the adapter, from a driver that
 * brought its PF up for traffic and then misbehaves. Each input is a list
 * of writes: Tx BDs (any field, addresses inside and outside what the IOMMU
 * maps), doorbell producers of the Tx queue and the SPQ, Rx GTT producers,
 * raw GTT words, ramrods (any protocol, command and data but PF_START and
 * PF_STOP, which end the PF the rest of the input needs), and BAR0 writes
 * (PTT entries, windows onto any GRC address, IGU commands). The device may
 * refuse, drop, raise attentions or wedge a queue; it must never crash or
 * touch host memory it was not given (ASan).
 */
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <thread>

#include "fake_driver.h"
#include "fuzz_input.h"

namespace {

using namespace cna::fw;
using namespace cna::fw::test;
using namespace cna::hsi;

using Input = FuzzInput;

struct Rig {
    std::unique_ptr<Adapter> adapter;
    std::unique_ptr<FakeDriver> drv;
    HostMem buffers;
};

Rig* rig;

/* Room for the longest chain the storms gather, and more. */
constexpr std::size_t BUFFER_BYTES = 512 * 1024;
constexpr uint32_t MAX_OPS = 32;

void tx_bds(Input& in)
{
    std::vector<eth::TxBd> bds(1 + in.take<uint8_t>() % 8);
    for (eth::TxBd& bd : bds) {
        uint16_t where = in.take<uint16_t>();
        /* Mostly inside the mapped buffers (16-byte steps), sometimes anywhere. */
        uint64_t addr = where & 0x8000 ? in.take<uint64_t>() : rig->buffers.iova + (where & 0x7fff) * 16u;
        bd.addr = make_regpair(addr);
        bd.nbytes = in.take<uint16_t>();
        bd.nbds = in.take<uint8_t>();
        bd.flags = in.take<uint8_t>();
        bd.vlan = in.take<uint16_t>();
        bd.mss = in.take<uint16_t>();
    }
    rig->drv->send_bds(0, bds);
}

void ramrod(Input& in)
{
    auto protocol = static_cast<ProtocolId>(in.take<uint8_t>() % 4);
    uint8_t cmd = in.take<uint8_t>();
    if (protocol == ProtocolId::common &&
        (cmd == static_cast<uint8_t>(CommonCmd::pf_start) || cmd == static_cast<uint8_t>(CommonCmd::pf_stop)))
        return;
    uint8_t data[128];
    for (uint8_t& b : data)
        b = in.take<uint8_t>();
    /* Not waited for: a ramrod the storms refuse to take must not stall the fuzzer. */
    rig->drv->ramrod(protocol, cmd, data, sizeof(data), false);
}

void bar0_write(Input& in)
{
    uint32_t offset = in.take<uint32_t>() % (BAR0_SIZE + 0x1000);
    uint32_t value = in.take<uint32_t>();
    if (offset < bar0_ptt_entry(1))
        return; /* PTT 0 is the fake driver's own window */
    if (offset >= BAR0_GTT_BASE && offset < BAR0_SIZE)
        return; /* the GTT is memory: gtt_write's */
    rig->drv->fn().bar0_write(offset, value);
}

void gtt_write(Input& in)
{
    uint32_t offset = (in.take<uint16_t>() * 4u) % GTT_SIZE;
    uint32_t value = in.take<uint32_t>();
    *reinterpret_cast<volatile uint32_t*>(rig->drv->fn().gtt_memory() + offset) = value;
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***)
{
    set_log_sink([](LogLevel, const std::string&) {}); /* refusals are the point: not worth a line each */
    rig = new Rig;
    AdapterConfig config;
    config.name = "fuzz";
    config.link_up_delay_ms = 0;
    rig->adapter = Adapter::create(config, nullptr);
    if (!rig->adapter)
        std::abort();
    rig->drv = std::make_unique<FakeDriver>(*rig->adapter, 0);
    L2Setup setup;
    setup.rx_queues = 2;
    setup.max_bds = 4;
    if (!bring_up_l2(*rig->drv, setup).empty() || !wait_link(*rig->drv))
        std::abort();
    rig->buffers = rig->drv->alloc(BUFFER_BYTES);
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size)
{
    Input in(data, size);
    FakeDriver& drv = *rig->drv;
    drv.open_ptt_access(); /* an earlier input may have closed it */
    for (uint32_t ops = 0; ops < MAX_OPS && !in.empty(); ops++) {
        switch (in.take<uint8_t>() % 7) {
        case 0: tx_bds(in); break;
        case 1: drv.ring_doorbell_at(drv.tx_cid(0), in.take<uint16_t>()); break;
        case 2: drv.ring_doorbell_at(CID_SPQ, in.take<uint16_t>()); break;
        case 3: {
            uint16_t queue = in.take<uint8_t>() % 2;
            drv.rx_write_producers(queue, in.take<uint16_t>(), in.take<uint16_t>());
            break;
        }
        case 4: ramrod(in); break;
        case 5: bar0_write(in); break;
        case 6: gtt_write(in); break;
        }
    }
    /* Let the engine act on the writes while they are still there. */
    std::this_thread::sleep_for(std::chrono::microseconds(200));
    return 0;
}
