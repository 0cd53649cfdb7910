/* SPDX-License-Identifier: BSD-3-Clause
 * The chain: a ring of fixed-size elements in one IOVA-contiguous block of
 * DMA memory, shared with the device (BD rings, CQE rings, the SPQ, the EQ).
 *
 * Producer and consumer are free-running u16 indices, as the device sees
 * them; the element of index i lives in slot (i & mask). The number of
 * elements is a power of two, so the indices wrap at 65536 consistently with
 * the slots. One slot is never used, so that "full" and "empty" differ in the
 * indices the device reports as well (capacity() = size - 1).
 *
 * Everything here is inline: the fastpath produces and consumes BDs with it.
 */
#pragma once

#include <cstddef>
#include <cstdint>

#include "ecore_status.h"
#include "osal_mem.h"

namespace cna::ecore {

class Chain {
public:
    static constexpr uint32_t MAX_ELEMS = 32768;

    Chain() = default;
    Chain(Chain&&) noexcept = default;
    Chain& operator=(Chain&&) noexcept = default;

    /* num_elems: a power of two in [2, MAX_ELEMS]. `what` names it in logs.
     * tail_bytes: memory behind the ring in the same allocation, tail()
     * (the stamp ring behind a CQE ring). */
    Status alloc(uint32_t num_elems, std::size_t elem_size, const char* what, std::size_t tail_bytes = 0);
    void free();
    explicit operator bool() const { return static_cast<bool>(mem_); }

    /* Back to empty (indices 0), contents kept. */
    void reset() { prod_ = cons_ = 0; }

    uint32_t size() const { return mask_ + 1u; }
    uint32_t capacity() const { return mask_; }
    std::size_t elem_size() const { return elem_size_; }
    uint64_t iova() const { return mem_.iova(); }
    void* va() const { return mem_.va(); }
    void* tail() const { return static_cast<uint8_t*>(mem_.va()) + std::size_t{size()} * elem_size_; }

    uint16_t prod() const { return prod_; }
    uint16_t cons() const { return cons_; }
    uint16_t used() const { return static_cast<uint16_t>(prod_ - cons_); }
    uint16_t free_count() const { return static_cast<uint16_t>(capacity() - used()); }
    bool is_empty() const { return prod_ == cons_; }
    bool is_full() const { return used() == capacity(); }

    /* Element of a (free-running) index. */
    void* elem(uint16_t idx) const
    {
        return static_cast<uint8_t*>(mem_.va()) + std::size_t{static_cast<uint16_t>(idx & mask_)} * elem_size_;
    }

    /* Returns the element at the producer and advances it; nullptr if full. */
    void* produce()
    {
        if (is_full())
            return nullptr;
        return elem(prod_++);
    }
    template <class T> T* produce_as() { return static_cast<T*>(produce()); }

    /* Returns the element at the consumer and advances it; nullptr if empty. */
    void* consume()
    {
        if (is_empty())
            return nullptr;
        return elem(cons_++);
    }
    template <class T> T* consume_as() { return static_cast<T*>(consume()); }

    /* Moves the consumer to an index the device reported (e.g. a Tx BD
     * consumer from the status block); it must not pass the producer. */
    void set_cons(uint16_t cons) { cons_ = cons; }
    /* Moves the producer, for rings the device produces into (CQEs, EQ). */
    void set_prod(uint16_t prod) { prod_ = prod; }

private:
    osal::DmaMem mem_;
    std::size_t elem_size_ = 0;
    uint16_t mask_ = 0;
    uint16_t prod_ = 0;
    uint16_t cons_ = 0;
};

} // namespace cna::ecore
