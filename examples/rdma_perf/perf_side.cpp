/* SPDX-License-Identifier: BSD-3-Clause */
#include "perf_side.h"

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>

#include <rte_cycles.h>

#include "example_net.h"

namespace cna::examples::perf {

namespace {

constexpr uint32_t RECV_DATA_CAP = 64u << 20; /* receive slots of a SEND test, in bytes at most */
constexpr int POLL_BATCH = 16;

uint32_t align_up(uint32_t v, uint32_t a) { return (v + a - 1) / a * a; }

} // namespace

const char* test_title(Test test)
{
    switch (test) {
    case Test::send: return "Send";
    case Test::write: return "RDMA_Write";
    case Test::read: return "RDMA_Read";
    case Test::atomic: return "Atomic";
    }
    return "?";
}

void encode(const Dest& d, char (&msg)[DEST_MSG_LEN])
{
    std::snprintf(msg, DEST_MSG_LEN, "%04x:%06x:%06x:%08x:%016" PRIx64 ":%s", d.lid, d.qpn, d.psn, d.rkey, d.vaddr,
                  gid_hex(d.gid).c_str());
}

bool decode(const char (&msg)[DEST_MSG_LEN], Dest* d)
{
    char gid[33] = {};
    return std::sscanf(msg, "%x:%x:%x:%x:%" SCNx64 ":%32s", &d->lid, &d->qpn, &d->psn, &d->rkey, &d->vaddr, gid) ==
               6 &&
           gid_from_hex(gid, &d->gid);
}

bool Side::open()
{
    const uint32_t largest = *std::max_element(o_.sizes.begin(), o_.sizes.end());
    region_ = align_up(std::max({largest, 64u, o_.tx_depth * 8}), 64);
    slots_ = o_.test == Test::send ? std::clamp(RECV_DATA_CAP / region_, 16u, o_.rx_depth) : 1;
    api::Device* dev = api::open(eth_port_);
    if (dev == nullptr) {
        std::fprintf(stderr, "Couldn't open RDMA device %u: %s\n", eth_port_, std::strerror(errno));
        return false;
    }
    const RcEndpoint::Shape shape{
        .buf_len = size_t{region_} * (slots_ + 1),
        .access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC,
        .cqe = static_cast<int>(o_.tx_depth + slots_ + 8),
        .max_send_wr = o_.tx_depth,
        .max_recv_wr = slots_,
        .max_inline_data = o_.max_inline,
        .initial_psn = o_.initial_psn,
    };
    if (!ep_.create(dev, shape))
        return false;
    ibv_port_attr port{};
    if (api::query_port(ep_.dev(), &port) != 0)
        return false;
    mtu_ = o_.mtu != 0 ? o_.mtu : port.active_mtu;
    if (o_.test == Test::send)
        for (uint32_t slot = 0; slot < slots_; slot++)
            if (!post_recv_slot(slot))
                return false;
    me_.qpn = ep_.qpn();
    me_.psn = ep_.psn();
    me_.rkey = ep_.rkey();
    me_.vaddr = reinterpret_cast<uint64_t>(target());
    return ep_.query_gid(o_.gid_index, &me_.gid);
}

bool Side::connect(const Dest& peer)
{
    peer_ = peer;
    return ep_.connect(peer, {.mtu = mtu_,
                              .max_rd_atomic = 16,
                              .min_rnr_timer = 1,
                              .global = true,
                              .hop_limit = 64,
                              .sgid_index = static_cast<uint8_t>(o_.gid_index)});
}

void Side::prepare(uint32_t size)
{
    size_ = size;
    iters_ = o_.iters != 0 ? o_.iters : o_.latency ? 1000 : 5000;
    posted_ = completed_ = sends_in_flight_ = 0;
    waiting_ = false;
    done_ = passive();
    samples_.clear();
    rtts_.clear();
    if (o_.latency)
        rtts_.reserve(iters_);
    /* What this end sends or serves carries the size's pattern; where data
     * lands holds its complement first, so no byte passes unwritten. */
    const bool serves = role_ == Role::responder && o_.test == Test::read;
    const bool sends = role_ == Role::requester ? o_.test != Test::read : o_.latency;
    if (sends)
        for (uint32_t j = 0; j < size; j++)
            source()[j] = pattern(j);
    if (serves)
        for (uint32_t j = 0; j < size; j++)
            target()[j] = pattern(j);
    else
        poison(target(), o_.test == Test::send && o_.check ? size_t{region_} * slots_ : region_);
    if (role_ == Role::requester && o_.test == Test::read)
        poison(source(), size);
    if (o_.latency && o_.test == Test::write)
        target()[size - 1] = 0; /* no marker yet */
    if (o_.test == Test::atomic)
        std::memcpy(target(), &ATOMIC_BASE, sizeof ATOMIC_BASE);
}

bool Side::passive() const
{
    /* The responder of a one-sided test, and of a WRITE bandwidth test,
     * leaves everything to its adapter. */
    return role_ == Role::responder &&
           (o_.test == Test::read || o_.test == Test::atomic || (o_.test == Test::write && !o_.latency));
}

bool Side::step()
{
    if (done_)
        return true;
    if (!o_.latency)
        return role_ == Role::requester ? requester_bw() : responder_send();
    switch (o_.test) {
    case Test::send: return send_latency();
    case Test::write: return write_latency();
    case Test::read:
    case Test::atomic: return one_sided_latency();
    }
    return false;
}

bool Side::post_send_wr(uint32_t index, bool signalled)
{
    ibv_sge sge{reinterpret_cast<uint64_t>(source()), size_, ep_.lkey()};
    ibv_send_wr wr{};
    wr.wr_id = index + 1;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.send_flags = signalled ? IBV_SEND_SIGNALED : 0;
    switch (o_.test) {
    case Test::send: wr.opcode = IBV_WR_SEND; break;
    case Test::write: wr.opcode = IBV_WR_RDMA_WRITE; break;
    case Test::read: wr.opcode = IBV_WR_RDMA_READ; break;
    case Test::atomic:
        sge.addr += 8 * (index % o_.tx_depth);
        sge.length = 8;
        wr.opcode = o_.cmp_swap ? IBV_WR_ATOMIC_CMP_AND_SWP : IBV_WR_ATOMIC_FETCH_AND_ADD;
        wr.wr.atomic.remote_addr = peer_.vaddr;
        wr.wr.atomic.rkey = peer_.rkey;
        wr.wr.atomic.compare_add = o_.cmp_swap ? ATOMIC_BASE + index : 1;
        wr.wr.atomic.swap = ATOMIC_BASE + index + 1;
        break;
    }
    if (o_.test == Test::write || o_.test == Test::read) {
        wr.wr.rdma.remote_addr = peer_.vaddr;
        wr.wr.rdma.rkey = peer_.rkey;
    }
    if ((o_.test == Test::send || o_.test == Test::write) && size_ <= o_.max_inline)
        wr.send_flags |= IBV_SEND_INLINE;
    ibv_send_wr* bad;
    if (int rc = api::post_send(ep_.qp(), &wr, &bad); rc != 0) {
        std::fprintf(stderr, "Couldn't post send %u: %s\n", index, std::strerror(rc));
        return false;
    }
    if (signalled)
        sends_in_flight_++;
    return true;
}

bool Side::post_recv_slot(uint32_t slot)
{
    ibv_sge sge{reinterpret_cast<uint64_t>(target() + size_t{slot} * region_), region_, ep_.lkey()};
    ibv_recv_wr wr{};
    wr.wr_id = slot;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    ibv_recv_wr* bad;
    if (int rc = api::post_recv(ep_.qp(), &wr, &bad); rc != 0) {
        std::fprintf(stderr, "Couldn't post receive: %s\n", std::strerror(rc));
        return false;
    }
    return true;
}

/* Bandwidth, requester: tx_depth requests in flight, one in cq_mod
 * signalled; a completion's wr_id is the count of requests it retires. */
bool Side::requester_bw()
{
    if (posted_ == 0)
        start_tsc_ = rte_rdtsc();
    /* Atomics: every result is checked as it completes. */
    const uint32_t cq_mod = o_.test == Test::atomic ? 1 : std::min(o_.cq_mod, o_.tx_depth);
    while (posted_ < iters_ && posted_ - completed_ < o_.tx_depth) {
        const bool signalled = (posted_ + 1) % cq_mod == 0 || posted_ + 1 == iters_;
        if (!post_send_wr(posted_, signalled))
            return false;
        posted_++;
    }
    return poll(POLL_BATCH);
}

bool Side::responder_send() { return poll(POLL_BATCH); }

bool Side::poll(int max)
{
    ibv_wc wc[POLL_BATCH];
    const int n = api::poll_cq(ep_.cq(), std::min(max, POLL_BATCH), wc);
    if (n < 0) {
        std::fprintf(stderr, "poll CQ failed\n");
        return false;
    }
    for (int i = 0; i < n; i++)
        if (!on_completion(wc[i]))
            return false;
    return true;
}

bool Side::on_completion(const ibv_wc& wc)
{
    if (wc.status != IBV_WC_SUCCESS) {
        std::fprintf(stderr, "Completion with error: status %d, vendor error 0x%x, wr_id %" PRIu64 ", opcode %d\n",
                     wc.status, wc.vendor_err, wc.wr_id, wc.opcode);
        return false;
    }
    const uint64_t now = rte_rdtsc();
    if (wc.opcode == IBV_WC_RECV) {
        const auto slot = static_cast<uint32_t>(wc.wr_id);
        uint8_t* data = target() + size_t{slot} * region_;
        if (wc.byte_len != size_) {
            std::fprintf(stderr, "Message %u: %u bytes, not %u\n", completed_, wc.byte_len, size_);
            return false;
        }
        if (o_.check) {
            for (uint32_t j = 0; j < size_; j++)
                if (data[j] != pattern(j)) {
                    std::fprintf(stderr, "Message %u: byte %u is 0x%02x, not 0x%02x\n", completed_, j, data[j],
                                 pattern(j));
                    return false;
                }
            poison(data, size_);
        }
        if (!post_recv_slot(slot))
            return false;
        if (o_.latency) {
            /* The ping arrived: the responder answers it, the requester
             * has its round trip. */
            if (role_ == Role::responder && !post_send_wr(completed_, true))
                return false;
            if (role_ == Role::requester) {
                rtts_.push_back(now - sent_tsc_);
                waiting_ = false;
            }
        }
        completed_++;
    } else {
        sends_in_flight_--;
        if (!o_.latency) {
            const auto retired = static_cast<uint32_t>(wc.wr_id);
            if (o_.test == Test::atomic && !check_atomic_results(completed_, retired))
                return false;
            completed_ = retired;
            samples_.emplace_back(completed_, now);
        } else if (o_.test == Test::read || o_.test == Test::atomic) {
            if (o_.test == Test::atomic && !check_atomic_results(completed_, completed_ + 1))
                return false;
            rtts_.push_back(now - sent_tsc_);
            waiting_ = false;
            completed_++;
        }
    }
    if (completed_ == iters_ && sends_in_flight_ == 0 && (role_ == Role::responder || posted_ == iters_ || o_.latency)) {
        done_ = !o_.latency || !waiting_;
        end_tsc_ = now;
    }
    return true;
}

bool Side::check_atomic_results(uint32_t from, uint32_t to) const
{
    if (!o_.check)
        return true;
    for (uint32_t k = from; k < to; k++) {
        uint64_t original;
        std::memcpy(&original, source() + 8 * (k % o_.tx_depth), sizeof original);
        if (original != ATOMIC_BASE + k) {
            std::fprintf(stderr, "Atomic %u returned 0x%016" PRIx64 ", not 0x%016" PRIx64 "\n", k, original,
                         ATOMIC_BASE + k);
            return false;
        }
    }
    return true;
}

/* SEND latency: the requester sends, the responder answers each message
 * it receives with one; a round trip ends with the answer's receive. */
bool Side::send_latency()
{
    if (role_ == Role::requester && !waiting_ && posted_ < iters_) {
        sent_tsc_ = rte_rdtsc();
        if (!post_send_wr(posted_, true))
            return false;
        posted_++;
        waiting_ = true;
    }
    return poll(POLL_BATCH);
}

/* WRITE latency, perftest's way: each end watches the last byte of its
 * buffer for the other's marker of the round, then writes its own. */
bool Side::write_latency()
{
    volatile uint8_t* last = target() + size_ - 1;
    if (role_ == Role::requester && !waiting_ && posted_ < iters_) {
        source()[size_ - 1] = marker(posted_);
        sent_tsc_ = rte_rdtsc();
        if (!post_send_wr(posted_, true))
            return false;
        posted_++;
        waiting_ = true;
    }
    if (completed_ < iters_ && *last == marker(completed_)) {
        if (o_.check)
            for (uint32_t j = 0; j + 1 < size_; j++)
                if (target()[j] != pattern(j)) {
                    std::fprintf(stderr, "Write %u: byte %u is 0x%02x, not 0x%02x\n", completed_, j, target()[j],
                                 pattern(j));
                    return false;
                }
        if (role_ == Role::requester) {
            rtts_.push_back(rte_rdtsc() - sent_tsc_);
            waiting_ = false;
        } else {
            source()[size_ - 1] = marker(completed_);
            if (!post_send_wr(completed_, true))
                return false;
            posted_++;
        }
        completed_++;
    }
    if (!poll(POLL_BATCH))
        return false;
    if (completed_ == iters_ && sends_in_flight_ == 0)
        done_ = true;
    return true;
}

/* READ and atomic latency: one request at a time, its completion the end
 * of the round trip. */
bool Side::one_sided_latency()
{
    if (!waiting_ && posted_ < iters_) {
        sent_tsc_ = rte_rdtsc();
        if (!post_send_wr(posted_, true))
            return false;
        posted_++;
        waiting_ = true;
    }
    return poll(1);
}

bool Side::verify() const
{
    if (!o_.check)
        return true;
    const uint8_t* data = nullptr;
    if (role_ == Role::responder && o_.test == Test::write && !o_.latency)
        data = target();
    if (role_ == Role::requester && o_.test == Test::read)
        data = source();
    if (data != nullptr)
        for (uint32_t j = 0; j < size_; j++)
            if (data[j] != pattern(j)) {
                std::fprintf(stderr, "%u-byte %s: byte %u is 0x%02x, not 0x%02x\n", size_, test_title(o_.test), j,
                             data[j], pattern(j));
                return false;
            }
    if (role_ == Role::responder && o_.test == Test::atomic) {
        uint64_t value;
        std::memcpy(&value, target(), sizeof value);
        if (value != ATOMIC_BASE + iters_) {
            std::fprintf(stderr, "Atomic target is 0x%016" PRIx64 " after %u atomics, not 0x%016" PRIx64 "\n", value,
                         iters_, ATOMIC_BASE + iters_);
            return false;
        }
    }
    return true;
}

/* The complement of the pattern, byte for byte: what stays of it after a
 * transfer shows. Offsets are taken modulo region_, each slot alike. */
void Side::poison(uint8_t* p, size_t n) const
{
    for (size_t j = 0; j < n; j++)
        p[j] = static_cast<uint8_t>(~pattern(static_cast<uint32_t>(j % region_)));
}

double Side::seconds() const
{
    return static_cast<double>(end_tsc_ - start_tsc_) / api::tsc_hz();
}

/* The best tenth of the run: the shortest time per message over stretches
 * of about iters/10 messages. */
double Side::peak_seconds_per_message() const
{
    double best = seconds() / std::max(iters_, 1u);
    const size_t n = samples_.size();
    const size_t span = std::max<size_t>(1, n / 10);
    for (size_t i = 0; i + span < n; i++) {
        const uint32_t msgs = samples_[i + span].first - samples_[i].first;
        const uint64_t cycles = samples_[i + span].second - samples_[i].second;
        if (msgs != 0)
            best = std::min(best, static_cast<double>(cycles) / api::tsc_hz() / msgs);
    }
    return best;
}

void Side::print_counters() const
{
#ifdef CNA_EXAMPLES_VERBS
    std::printf(" counters: the RoCE counters are the RDMA PMD's API (rdma_perf), not verbs'\n");
#else
    cna_rdma_port_counters port{};
    cna_rdma_qp_counters qp{};
    if (cna_rdma_query_port_counters(ep_.dev(), &port) != 0 || cna_rdma_query_qp_counters(ep_.qp(), &qp) != 0) {
        std::fprintf(stderr, "Couldn't read the RoCE counters\n");
        return;
    }
    std::printf(" port counters: rx_packets %" PRIu64 " tx_packets %" PRIu64 " icrc_errors %" PRIu64
                " bad_packets %" PRIu64 " retransmitted %" PRIu64 " timeouts %" PRIu64 " naks_sent %" PRIu64
                " naks_received %" PRIu64 " rnr_naks_sent %" PRIu64 " rnr_naks_received %" PRIu64
                " duplicates %" PRIu64 " out_of_sequence %" PRIu64 "\n",
                port.rx_packets, port.tx_packets, port.icrc_errors, port.bad_packets, port.retransmitted,
                port.timeouts, port.naks_sent, port.naks_received, port.rnr_naks_sent, port.rnr_naks_received,
                port.duplicates, port.out_of_sequence);
    std::printf(" qp counters: packets_sent %" PRIu64 " retransmitted %" PRIu64 " timeouts %" PRIu64
                " naks_received %" PRIu64 " rnr_naks_received %" PRIu64 " packets_received %" PRIu64
                " duplicates %" PRIu64 " out_of_sequence %" PRIu64 " naks_sent %" PRIu64 " rnr_naks_sent %" PRIu64
                "\n",
                qp.packets_sent, qp.retransmitted, qp.timeouts, qp.naks_received, qp.rnr_naks_received,
                qp.packets_received, qp.duplicates, qp.out_of_sequence, qp.naks_sent, qp.rnr_naks_sent);
#endif
}

} // namespace cna::examples::perf
