/* SPDX-License-Identifier: BSD-3-Clause
 * The bursts of engine=inline: the adapter's dataplane runs on the lcores
 * that poll its ports, as a hypervisor's device model runs on the vCPU that
 * touched the device. A Tx burst's doorbell is served before the burst
 * returns; an Rx poll that finds nothing gives the adapter a pass (its
 * wire's frames, its RoCE, the Tx of the port group's other queues) and
 * looks again. Each wraps the burst function select_fastpath chose; the
 * plain ones stay as they are for the other placements and for hardware.
 *
 * Threading: a Tx burst's doorbell is served in a pass of its queue's own
 * (the queue's BDs, their frames delivered to the Rx queues they are for),
 * so lcores sending on different queues, of one port or of two, pass in
 * parallel; an Rx queue takes one pass's frames at a time, each pass
 * claiming it for a burst. The port group's pass (its wires' TAP frames,
 * its RoCE, and the Tx of queues whose own pass has not run) is one
 * lcore's at a time and never waits: an idle poll that finds it taken
 * leaves nothing, the pass running doing its work. A doorbell whose frames
 * need the group's pass (RoCE on the group, a VF switch, a TAP wire) is
 * left to it as an idle poll's work is not: the lcore in it passes again.
 * Lcores polling ports of different groups pass in parallel.
 */
#include "cna_rxtx.h"

#include "pci_function.h"

namespace cna::net {
namespace {

template <Burst RECV>
uint16_t recv_inline(void* rx_queue, rte_mbuf** rx_pkts, uint16_t nb_pkts)
{
    const uint16_t nb = RECV(rx_queue, rx_pkts, nb_pkts);
    if (nb != 0 || !static_cast<RxQueue*>(rx_queue)->inline_adapter->adapter_pass(osal::PciFunction::PassCause::idle))
        return nb;
    return RECV(rx_queue, rx_pkts, nb_pkts);
}

template <Burst XMIT>
uint16_t xmit_inline(void* tx_queue, rte_mbuf** tx_pkts, uint16_t nb_pkts)
{
    const uint16_t nb = XMIT(tx_queue, tx_pkts, nb_pkts);
    const TxQueue* txq = static_cast<TxQueue*>(tx_queue);
    txq->inline_adapter->adapter_doorbell(txq->doorbell_addr);
    return nb;
}

/* Each burst function beside its wrapper: Rx ones give a pass when they
 * find nothing, Tx ones after their doorbell. */
struct BurstPair {
    Burst plain;
    Burst inline_burst;
};

constexpr BurstPair BURSTS[] = {
    {recv_pkts, recv_inline<recv_pkts>},
    {recv_pkts_offload, recv_inline<recv_pkts_offload>},
    {recv_pkts_timestamp, recv_inline<recv_pkts_timestamp>},
    {recv_pkts_offload_timestamp, recv_inline<recv_pkts_offload_timestamp>},
    {xmit_pkts, xmit_inline<xmit_pkts>},
#ifdef CNA_HAVE_AVX2
    {recv_pkts_avx2, recv_inline<recv_pkts_avx2>},
    {recv_pkts_avx2_offload, recv_inline<recv_pkts_avx2_offload>},
    {recv_pkts_avx2_timestamp, recv_inline<recv_pkts_avx2_timestamp>},
    {recv_pkts_avx2_offload_timestamp, recv_inline<recv_pkts_avx2_offload_timestamp>},
    {xmit_pkts_avx2, xmit_inline<xmit_pkts_avx2>},
#endif
};

} // namespace

Burst inline_burst(Burst plain)
{
    for (const BurstPair& p : BURSTS)
        if (p.plain == plain)
            return p.inline_burst;
    return plain;
}

Burst plain_burst(Burst burst)
{
    for (const BurstPair& p : BURSTS)
        if (p.inline_burst == burst)
            return p.plain;
    return burst;
}

} // namespace cna::net
