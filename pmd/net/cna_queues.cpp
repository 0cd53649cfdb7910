/* SPDX-License-Identifier: BSD-3-Clause
 * Queue control: starting and stopping single Rx/Tx queues in the adapter
 * (at port start/stop, and as ethdev's per-queue start/stop), and the Rx
 * queue interrupts.
 */
#include <cerrno>

#include <sys/eventfd.h>

#include <rte_interrupts.h>

#include "cna_ethdev_ops.h"
#include "cna_log.h"
#include "cna_rdma_port.h"
#include "cna_rxtx.h"
#include "ecore_l2_api.h"

namespace cna::net {

int start_rx_queue(EthPort* port, RxQueue* rxq)
{
    return start_rx_queue_at(port->eth_dev, rxq, {port->edev.hwfn, VPORT_ID, rxq->queue_id, port->sbs[rxq->queue_id]});
}

int start_tx_queue(EthPort* port, TxQueue* txq)
{
    return start_tx_queue_at(port->eth_dev, txq, {port->edev.hwfn, VPORT_ID, txq->queue_id, port->sbs[txq->queue_id]});
}

void stop_rx_queue(EthPort* port, RxQueue* rxq) { stop_rx_queue_at(port->eth_dev, rxq, port); }

void stop_tx_queue(EthPort* port, TxQueue* txq) { stop_tx_queue_at(port->eth_dev, txq, port); }

int start_rx_queue_at(rte_eth_dev* dev, RxQueue* rxq, const QueueSite& site)
{
    if (int rc = rx_queue_fill(rxq); rc != 0) {
        PMD_DEV_LOG(ERR, dev, "Rx queue %u: mempool %s cannot fill %u descriptors", rxq->queue_id, rxq->mp->name,
                    rxq->mask);
        return rc;
    }
    ecore::RxQueueStartParams p;
    p.queue.vport_id = site.vport_id;
    p.queue.queue_id = site.queue_id;
    p.queue.sb_id = site.queue_id;
    p.queue.sb_idx = hsi::L2_PI_RX;
    p.bd_max_bytes = rxq->buf_size;
    p.bd_ring_iova = rxq->bd_chain.iova();
    p.bd_ring_size = rxq->nb_desc;
    p.cqe_ring_iova = rxq->cqe_chain.iova();
    p.cqe_ring_size = rxq->nb_desc;
    p.timestamp = rxq->stamps != nullptr;
    ecore::RxQueueStartRet ret;
    const ecore::Status st = ecore::eth_rx_queue_start(site.hwfn, p, &ret);
    if (st != ecore::Status::success) {
        rx_queue_drain(rxq);
        return ecore::status_to_errno(st);
    }
    rxq->handle = ret.handle;
    rxq->rx_prod_addr = ret.rx_prod_addr;
    rxq->hw_cqe_prod = const_cast<const uint16_t*>(&site.sb.info.sb_virt->pi_array[hsi::L2_PI_RX]);
    rxq->started = true;
    ecore::eth_rx_prod_update(rxq->rx_prod_addr, rxq->bd_prod, rxq->cqe_cons);
    dev->data->rx_queue_state[rxq->queue_id] = RTE_ETH_QUEUE_STATE_STARTED;
    return 0;
}

int start_tx_queue_at(rte_eth_dev* dev, TxQueue* txq, const QueueSite& site)
{
    ecore::TxQueueStartParams p;
    p.queue.vport_id = site.vport_id;
    p.queue.queue_id = site.queue_id;
    p.queue.sb_id = site.queue_id;
    p.queue.sb_idx = hsi::L2_PI_TX;
    p.bd_ring_iova = txq->bd_chain.iova();
    p.bd_ring_size = txq->nb_desc;
    ecore::TxQueueStartRet ret;
    const ecore::Status st = ecore::eth_tx_queue_start(site.hwfn, p, &ret);
    if (st != ecore::Status::success)
        return ecore::status_to_errno(st);
    txq->handle = ret.handle;
    txq->doorbell_addr = ret.doorbell_addr;
    txq->hw_bd_cons = const_cast<const uint16_t*>(&site.sb.info.sb_virt->pi_array[hsi::L2_PI_TX]);
    txq->bd_prod = txq->bd_cons = 0;
    txq->started = true;
    dev->data->tx_queue_state[txq->queue_id] = RTE_ETH_QUEUE_STATE_STARTED;
    return 0;
}

void stop_rx_queue_at(rte_eth_dev* dev, RxQueue* rxq, EthPort* function)
{
    if (!rxq->started)
        return;
    /* A gone device is not asked: the ring is the host's alone. */
    const ecore::Status st =
        removed(function) ? ecore::Status::success : ecore::eth_rx_queue_stop(function->edev.hwfn, rxq->handle);
    if (st != ecore::Status::success)
        PMD_DEV_LOG(WARNING, dev, "Rx queue %u stop: %s", rxq->queue_id, ecore::status_name(st));
    rxq->started = false;
    rx_queue_drain(rxq);
    dev->data->rx_queue_state[rxq->queue_id] = RTE_ETH_QUEUE_STATE_STOPPED;
}

void stop_tx_queue_at(rte_eth_dev* dev, TxQueue* txq, EthPort* function)
{
    if (!txq->started)
        return;
    /* A gone device is not asked: the ring is the host's alone. */
    const ecore::Status st =
        removed(function) ? ecore::Status::success : ecore::eth_tx_queue_stop(function->edev.hwfn, txq->handle);
    if (st != ecore::Status::success)
        PMD_DEV_LOG(WARNING, dev, "Tx queue %u stop: %s", txq->queue_id, ecore::status_name(st));
    txq->started = false;
    tx_queue_drain(txq);
    dev->data->tx_queue_state[txq->queue_id] = RTE_ETH_QUEUE_STATE_STOPPED;
}

void stop_all_queues(EthPort* port)
{
    rte_eth_dev_data* data = port->eth_dev->data;
    for (uint16_t q = 0; q < data->nb_tx_queues; q++)
        if (auto* txq = static_cast<TxQueue*>(data->tx_queues[q]))
            stop_tx_queue(port, txq);
    for (uint16_t q = 0; q < data->nb_rx_queues; q++)
        if (auto* rxq = static_cast<RxQueue*>(data->rx_queues[q]))
            stop_rx_queue(port, rxq);
}

/* ---- ethdev per-queue ops ---------------------------------------------------- */

namespace {

int queue_op_check(rte_eth_dev* dev, const char* what, uint16_t queue_id)
{
    EthPort* port = port_of(dev);
    if (!port->vport_started) {
        PMD_LOG(ERR, port, "%s queue %u: the port is not started", what, queue_id);
        return -EIO;
    }
    return 0;
}

} // namespace

int rx_queue_start(rte_eth_dev* dev, uint16_t queue_id)
{
    if (int rc = queue_op_check(dev, "Rx", queue_id); rc != 0)
        return rc;
    auto* rxq = static_cast<RxQueue*>(dev->data->rx_queues[queue_id]);
    return rxq->started ? 0 : start_rx_queue(port_of(dev), rxq);
}

int rx_queue_stop(rte_eth_dev* dev, uint16_t queue_id)
{
    if (int rc = queue_op_check(dev, "Rx", queue_id); rc != 0)
        return rc;
    stop_rx_queue(port_of(dev), static_cast<RxQueue*>(dev->data->rx_queues[queue_id]));
    return 0;
}

int tx_queue_start(rte_eth_dev* dev, uint16_t queue_id)
{
    if (int rc = queue_op_check(dev, "Tx", queue_id); rc != 0)
        return rc;
    auto* txq = static_cast<TxQueue*>(dev->data->tx_queues[queue_id]);
    return txq->started ? 0 : start_tx_queue(port_of(dev), txq);
}

int tx_queue_stop(rte_eth_dev* dev, uint16_t queue_id)
{
    if (int rc = queue_op_check(dev, "Tx", queue_id); rc != 0)
        return rc;
    stop_tx_queue(port_of(dev), static_cast<TxQueue*>(dev->data->tx_queues[queue_id]));
    return 0;
}

/* ---- Rx queue interrupts ------------------------------------------------------ */

/* Each Rx queue's status block has its own MSI-X vector, an eventfd: ethdev's
 * Rx interrupt API (rte_eth_dev_rx_intr_ctl_q) epolls it through the
 * interrupt handle the port publishes. */
int rx_intr_setup(rte_eth_dev* dev)
{
    EthPort* port = port_of(dev);
    rx_intr_release(dev);
    if (!dev->data->dev_conf.intr_conf.rxq)
        return 0;
    if (inline_adapter(port) != nullptr) { /* engine=inline, asked for or joined */
        /* No thread would move the frames an interrupt waits for. */
        PMD_LOG(ERR, port, "no Rx queue interrupts with engine=inline: the adapter runs only in the lcores' polls "
                           "(engine=threads or engine=service)");
        return -ENOTSUP;
    }
    if (port->pci->msix_count() == 0) {
        PMD_LOG(ERR, port, "no Rx queue interrupts: the function has no MSI-X (a VF in a VM runs in poll mode)");
        return -ENOTSUP;
    }
    const uint16_t nb_rxq = dev->data->nb_rx_queues;
    rte_intr_handle* h = rte_intr_instance_alloc(RTE_INTR_INSTANCE_F_PRIVATE);
    if (h == nullptr)
        return -ENOMEM;
    int rc = rte_intr_type_set(h, RTE_INTR_HANDLE_VDEV);
    rc = rc ?: rte_intr_efd_counter_size_set(h, sizeof(uint64_t));
    rc = rc ?: rte_intr_nb_efd_set(h, nb_rxq);
    rc = rc ?: rte_intr_max_intr_set(h, nb_rxq + 1);
    rc = rc ?: rte_intr_vec_list_alloc(h, "cna_rx_intr", nb_rxq);
    for (uint16_t q = 0; q < nb_rxq && rc == 0; q++) {
        rc = rte_intr_efds_index_set(h, q, port->pci->msix_eventfd(sb_vector(port, q)));
        rc = rc ?: rte_intr_vec_list_index_set(h, q, RTE_INTR_VEC_RXTX_OFFSET + q);
    }
    if (rc != 0) {
        PMD_LOG(ERR, port, "cannot set up Rx queue interrupts");
        rte_intr_vec_list_free(h);
        rte_intr_instance_free(h);
        return -ENOMEM;
    }
    port->rx_intr = h;
    dev->intr_handle = h;
    return 0;
}

void rx_intr_release(rte_eth_dev* dev)
{
    EthPort* port = port_of(dev);
    if (port->rx_intr == nullptr)
        return;
    dev->intr_handle = nullptr;
    rte_intr_vec_list_free(port->rx_intr);
    rte_intr_instance_free(port->rx_intr);
    port->rx_intr = nullptr;
}

/* Acknowledging the status block with "enable" arms its vector: the IGU fires
 * when the adapter next updates the SB. Frames that completed before arming
 * would not wake the application, so the driver then raises the vector itself
 * (an MSI-X vector here is an eventfd anyone with the function may signal). */
int rx_queue_intr_enable(rte_eth_dev* dev, uint16_t queue_id)
{
    EthPort* port = port_of(dev);
    ecore::SbInfo& sb = port->sbs[queue_id].info;
    ecore::sb_update_sb_idx(sb);
    ecore::sb_ack(sb, hsi::IguIntOp::enable);
    if (rx_queue_count(dev->data->rx_queues[queue_id]) != 0 &&
        eventfd_write(port->pci->msix_eventfd(sb_vector(port, queue_id)), 1) != 0)
        return -errno;
    return 0;
}

int rx_queue_intr_disable(rte_eth_dev* dev, uint16_t queue_id)
{
    ecore::sb_ack(port_of(dev)->sbs[queue_id].info, hsi::IguIntOp::disable);
    return 0;
}

} // namespace cna::net
