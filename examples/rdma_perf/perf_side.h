/* SPDX-License-Identifier: BSD-3-Clause
 * One end of an rdma_perf connection: its RC endpoint, and the test it
 * runs as requester or responder, one non-blocking step at a time (so one
 * thread can drive both ends of a cabled pair, and a latency figure is
 * not a scheduler's).
 */
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "rc_endpoint.h"

namespace cna::examples::perf {

enum class Test { send, write, read, atomic };
const char* test_title(Test test); /* "Send", "RDMA_Write", ... as perftest names them */

struct Options {
    Test test = Test::write;
    bool latency = false;
    bool cmp_swap = false;           /* atomics: CMP_AND_SWP instead of FETCH_AND_ADD */
    std::vector<uint32_t> sizes{65536};
    uint32_t iters = 0;              /* 0: perftest's defaults (1000 latency, 5000 bandwidth) */
    uint32_t tx_depth = 128;
    uint32_t rx_depth = 512;
    uint32_t cq_mod = 64;            /* bandwidth: one signalled WR in cq_mod */
    uint32_t max_inline = 220;       /* messages up to this size go inline (SEND and WRITE) */
    bool check = false;              /* verify every payload byte */
    bool counters = false;           /* print the RoCE counters at the end */
    int gid_index = 0;
    ibv_mtu mtu = static_cast<ibv_mtu>(0); /* 0: the port's active MTU */
    long initial_psn = -1;           /* -1: random */
};

/* What peers exchange: perftest's fields, the QP's address and where its
 * buffer is. */
struct Dest : RcAddress {
    uint32_t rkey = 0;
    uint64_t vaddr = 0;
};
/* "LLLL:QQQQQQ:PPPPPP:RRRRRRRR:VVVVVVVVVVVVVVVV:" and the GID as 32 hex digits. */
constexpr size_t DEST_MSG_LEN = 80;
void encode(const Dest& d, char (&msg)[DEST_MSG_LEN]);
bool decode(const char (&msg)[DEST_MSG_LEN], Dest* d);

enum class Role { requester, responder };

class Side {
public:
    /* On ethdev port eth_port's RDMA device (rdma_perf_verbs: device cna<eth_port>). */
    Side(const Options& o, Role role, uint16_t eth_port) : o_(o), role_(role), eth_port_(eth_port) {}

    bool open();
    const Dest& me() const { return me_; }
    ibv_mtu mtu() const { return mtu_; }
    bool connect(const Dest& peer);
    /* Before a size: buffers filled or poisoned, counters cleared. */
    void prepare(uint32_t size);
    /* One turn of the test: posts what may be posted, polls the CQ. False
     * on an error (printed). */
    bool step();
    bool done() const { return done_; }
    /* After both ends are done: the data this end holds is what the other
     * end sent or left. False (printed) if not. */
    bool verify() const;

    /* Results of the requester. */
    double seconds() const;
    double peak_seconds_per_message() const;
    /* The port's and the QP's RoCE counters, one line each (the RDMA PMD's
     * own API: not in rdma_perf_verbs). */
    void print_counters() const;
    /* Round trips (latency tests), in TSC cycles, in order. */
    const std::vector<uint64_t>& round_trips() const { return rtts_; }

private:
    bool post_send_wr(uint32_t index, bool signalled);
    bool post_recv_slot(uint32_t slot);
    bool poll(int max);
    bool on_completion(const ibv_wc& wc);
    bool requester_bw();
    bool responder_send();
    bool send_latency();
    bool write_latency();
    bool one_sided_latency();
    bool check_atomic_results(uint32_t from, uint32_t to) const;
    bool passive() const;
    void poison(uint8_t* p, size_t n) const;

    uint8_t* target() const { return ep_.buf(); }
    uint8_t* source() const { return ep_.buf() + region_ * slots_; }
    uint8_t pattern(uint32_t j) const { return static_cast<uint8_t>(j * 7 + size_ * 13 + 1); }
    static uint8_t marker(uint32_t i) { return static_cast<uint8_t>(i % 255 + 1); }

    const Options& o_;
    const Role role_;
    const uint16_t eth_port_;
    RcEndpoint ep_;
    uint32_t region_ = 0;   /* bytes per slot: the largest size, aligned */
    uint32_t slots_ = 1;    /* receive slots (SEND tests) */
    ibv_mtu mtu_ = IBV_MTU_1024;
    Dest me_, peer_;

    /* The current size's run. */
    uint32_t size_ = 0;
    uint32_t iters_ = 0;
    uint32_t posted_ = 0;       /* requests posted */
    uint32_t completed_ = 0;    /* requests completed (bandwidth) or answered (latency) */
    uint32_t sends_in_flight_ = 0;
    bool waiting_ = false;      /* latency: a request out, its answer not yet in */
    bool done_ = false;
    uint64_t start_tsc_ = 0, end_tsc_ = 0, sent_tsc_ = 0;
    std::vector<std::pair<uint32_t, uint64_t>> samples_; /* (completed, tsc) at each completion */
    std::vector<uint64_t> rtts_;
};

/* The atomics' first value at the responder; each atomic adds one. */
constexpr uint64_t ATOMIC_BASE = 0x0123456700000000ull;

} // namespace cna::examples::perf
