/* SPDX-License-Identifier: BSD-3-Clause
 * net_cna Rx/Tx queues: the rings the adapter DMAs to and from, and the
 * burst functions that run on lcores.
 */
#pragma once

#include <atomic>
#include <cstdint>

#include <rte_mbuf.h>

#include "ecore_chain.h"
#include "ecore_int_api.h"
#include "ecore_l2_api.h"
#include "hsi_eth.h"

struct rte_eth_dev;
struct rte_eth_rxconf;
struct rte_eth_txconf;
struct rte_eth_rxq_info;
struct rte_eth_txq_info;

namespace cna::osal {
class PciFunction;
}

namespace cna::net {

/* Rx buffers are posted in bulks of this many (refill and mempool gets). */
inline constexpr uint16_t RX_REFILL_BULK = 32;
/* Transmitted mbufs go back to their pool in bulks of at most this many. */
inline constexpr unsigned TX_FREE_BULK = 64;

struct RxQueue {
    /* fastpath, in the order rx_burst touches it */
    volatile const uint16_t* hw_cqe_prod; /* L2_PI_RX of the queue's status block */
    hsi::eth::RxCqe* cqe_ring;
    hsi::eth::RxBd* bd_ring;
    rte_mbuf** sw_ring;                   /* mbuf of each posted BD, by BD slot */
    uint16_t mask;                        /* ring size - 1 (BD and CQE rings alike) */
    uint16_t cqe_cons;
    uint16_t bd_cons;                     /* next BD the adapter fills */
    uint16_t bd_prod;                     /* BDs posted so far */
    volatile uint32_t* rx_prod_addr;      /* GTT: RxProdData */
    uint64_t mbuf_initializer;            /* rearm_data template */
    rte_mempool* mp;
    uint32_t va_to_bd;                    /* BD address - mbuf address, 0: read buf_iova (rx_bd_addr) */
    uint16_t port_id;
    uint16_t buf_size;                    /* bytes the adapter may write per buffer */
    const uint64_t* stamps;               /* TIMESTAMP: the stamp ring behind the CQEs, else nullptr */
    intptr_t timestamp_offset;            /* the Rx timestamp dynfield's (pointer-sized: an index register as it is) */
    uint64_t timestamp_flag;              /* its dynflag */
    uint64_t alloc_failures;              /* mbufs the refill could not get (atomic_ref) */
    osal::PciFunction* inline_adapter;    /* engine=inline: whose pass an empty poll gives (primary) */

    /* slowpath */
    uint64_t alloc_failures_base;         /* alloc_failures at the last stats reset */
    uint16_t queue_id;
    uint16_t nb_desc;
    bool started;
    bool deferred_start;
    ecore::Chain bd_chain;
    ecore::Chain cqe_chain;
    ecore::QueueHandle handle;
};

struct TxQueue {
    /* fastpath, in the order tx_burst touches it */
    volatile const uint16_t* hw_bd_cons;  /* L2_PI_TX of the queue's status block */
    hsi::eth::TxBd* bd_ring;
    rte_mbuf** sw_ring;                   /* segment owning each BD, by BD slot */
    uint16_t mask;
    uint16_t bd_cons;                     /* BDs the adapter is done with */
    uint16_t bd_prod;
    volatile uint32_t* doorbell_addr;
    const std::atomic<bool>* gone;        /* the port's removal_reported: nothing is sent after it */
    bool fast_free;                       /* RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE: one pool, refcnt 1, direct */
    osal::PciFunction* inline_adapter;    /* engine=inline: whose pass serves the doorbell (primary) */

    /* slowpath */
    uint16_t queue_id;
    uint16_t nb_desc;
    bool started;
    bool deferred_start;
    ecore::Chain bd_chain;
    ecore::QueueHandle handle;
};

int rx_queue_setup(rte_eth_dev* dev, uint16_t queue_id, uint16_t nb_desc, unsigned socket_id,
                   const rte_eth_rxconf* conf, rte_mempool* mp);
void rx_queue_release(rte_eth_dev* dev, uint16_t queue_id);
int tx_queue_setup(rte_eth_dev* dev, uint16_t queue_id, uint16_t nb_desc, unsigned socket_id,
                   const rte_eth_txconf* conf);
void tx_queue_release(rte_eth_dev* dev, uint16_t queue_id);

/* Posts a buffer on every BD of a stopped Rx queue; -ENOMEM if the pool
 * cannot fill it (nothing is then kept). */
int rx_queue_fill(RxQueue* rxq);
/* Returns every mbuf a stopped queue holds to its pool and rewinds it. */
void rx_queue_drain(RxQueue* rxq);
void tx_queue_drain(TxQueue* txq);

void rxq_info_get(rte_eth_dev* dev, uint16_t queue_id, rte_eth_rxq_info* info);
void txq_info_get(rte_eth_dev* dev, uint16_t queue_id, rte_eth_txq_info* info);

/* The burst functions. Rx comes in four flavours, chosen by the port's
 * offloads: *_offload reports checksum flags and the RSS hash (a checksum
 * offload or RSS_HASH enabled), *_timestamp the adapter's Rx timestamp
 * (TIMESTAMP); the others leave them out and cost less. */
uint16_t recv_pkts(void* rx_queue, rte_mbuf** rx_pkts, uint16_t nb_pkts);
uint16_t recv_pkts_offload(void* rx_queue, rte_mbuf** rx_pkts, uint16_t nb_pkts);
uint16_t recv_pkts_timestamp(void* rx_queue, rte_mbuf** rx_pkts, uint16_t nb_pkts);
uint16_t recv_pkts_offload_timestamp(void* rx_queue, rte_mbuf** rx_pkts, uint16_t nb_pkts);
uint16_t prep_pkts(void* tx_queue, rte_mbuf** tx_pkts, uint16_t nb_pkts);
uint32_t rx_queue_count(void* rx_queue);
int rx_descriptor_status(void* rx_queue, uint16_t offset);
int tx_descriptor_status(void* tx_queue, uint16_t offset);
uint16_t xmit_pkts(void* tx_queue, rte_mbuf** tx_pkts, uint16_t nb_pkts);

/* The AVX2 burst functions (cna_rxtx_avx2.cpp) for single-buffer frames and
 * packets without Tx offloads; anything else they hand to the scalar
 * handling, packet by packet. */
uint16_t recv_pkts_avx2(void* rx_queue, rte_mbuf** rx_pkts, uint16_t nb_pkts);
uint16_t recv_pkts_avx2_offload(void* rx_queue, rte_mbuf** rx_pkts, uint16_t nb_pkts);
uint16_t recv_pkts_avx2_timestamp(void* rx_queue, rte_mbuf** rx_pkts, uint16_t nb_pkts);
uint16_t recv_pkts_avx2_offload_timestamp(void* rx_queue, rte_mbuf** rx_pkts, uint16_t nb_pkts);
uint16_t xmit_pkts_avx2(void* tx_queue, rte_mbuf** tx_pkts, uint16_t nb_pkts);

/* The queue functions ethdev calls on lcores (probe); the bursts are the
 * scalar ones until select_fastpath. */
void set_fastpath_ops(rte_eth_dev* dev);
/* Chooses the Rx and Tx burst functions for the port's configuration and
 * the CPU (dev_start), wrapped in the adapter's passes where the lcores run
 * its dataplane (engine=inline, cna_rxtx_inline.cpp: the queues'
 * inline_adapter set). */
void select_fastpath(rte_eth_dev* dev, bool inline_engine);
/* This process's fastpath for the port from now on: dev's bursts and
 * queue callbacks copied into ethdev's fastpath table, which ethdev fills
 * itself only at start (and at a secondary's probe). */
void publish_fastpath(rte_eth_dev* dev);
/* The bursts that move nothing, published: for a port not started in this
 * (secondary) process. */
void stop_fastpath(rte_eth_dev* dev);
/* A burst function's engine=inline wrapper, and back (ethdev's
 * eth_rx_burst_t and eth_tx_burst_t, which are the same type). */
using Burst = uint16_t (*)(void* queue, rte_mbuf** pkts, uint16_t nb_pkts);
Burst inline_burst(Burst plain);
Burst plain_burst(Burst burst);
/* The name of the chosen burst function, for burst_mode_get. */
const char* rx_burst_mode_name(const rte_eth_dev* dev);
const char* tx_burst_mode_name(const rte_eth_dev* dev);

} // namespace cna::net
