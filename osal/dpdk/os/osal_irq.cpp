/* SPDX-License-Identifier: BSD-3-Clause */
#include "osal_irq.h"

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <unistd.h>
#include <utility>

#include <rte_interrupts.h>

#include "osal_log.h"
#include "osal_sync.h"

namespace cna::osal {

/* What the EAL holds on to while the handler is registered. It lives on the
 * heap so that a removal deferred to the end of a running handler can free
 * it after the EAL is done with it. */
struct MsixIrq::Slot {
    rte_intr_handle* intr = nullptr;
    int fd = -1;
    Handler handler = nullptr;
    void* arg = nullptr;
    /* Bumped as each run of the handler returns, and read once the EAL has
     * let go of the handler: the EAL orders the two with a lock, but inside
     * Debian's uninstrumented library, where ThreadSanitizer cannot see it.
     * This makes the order explicit: all the handler did, then the free. */
    std::atomic<uint64_t> runs{0};
    /* A release from inside the handler leaves the removal to the EAL for
     * when the handler returns (pending); the EAL says when it is done
     * (unregistered), and the next release elsewhere waits for that before
     * the slot goes, so that its owner may close the fd at once. */
    bool pending = false;
    std::atomic<bool> unregistered{false};
};

namespace {

void on_eventfd(void* arg)
{
    auto* slot = static_cast<MsixIrq::Slot*>(arg);
    /* Drain the eventfd first: a signal arriving while the handler runs
     * then makes it run again rather than being lost. */
    uint64_t count;
    while (read(slot->fd, &count, sizeof(count)) < 0 && errno == EINTR) {
    }
    slot->handler(slot->arg);
    slot->runs.fetch_add(1, std::memory_order_release);
}

void free_slot(MsixIrq::Slot* slot)
{
    rte_intr_instance_free(slot->intr);
    delete slot;
}

/* Off the interrupt thread, before the handler goes: it runs once more,
 * and its run is waited for (a second at most). The EAL's thread added the
 * fd to the epoll set it waits on before that run, and the run's count is
 * read with acquire: so the owner's close of the fd after release() comes
 * after the EAL's use of it for ThreadSanitizer too, which cannot see the
 * EAL's own lock. A handler must take a run for nothing (as an interrupt
 * that finds no work). Not for a fd that cannot be signalled (a hung-up
 * pipe's read end). */
void run_once_more(MsixIrq::Slot& slot)
{
    const uint64_t runs = slot.runs.load(std::memory_order_acquire);
    if (!msix_rearm(slot.fd))
        return;
    for (int waited_us = 0; slot.runs.load(std::memory_order_acquire) == runs && waited_us < 1000000; waited_us += 100)
        usleep(100);
}

void on_deferred_unregister(rte_intr_handle*, void* arg)
{
    static_cast<MsixIrq::Slot*>(arg)->unregistered.store(true, std::memory_order_release);
}

} // namespace

int MsixIrq::request(int eventfd, Handler handler, void* arg)
{
    if (slot_ != nullptr)
        return -EBUSY;
    if (eventfd < 0 || handler == nullptr)
        return -EINVAL;

    auto* slot = new (std::nothrow) Slot{nullptr, eventfd, handler, arg};
    if (slot == nullptr)
        return -ENOMEM;
    slot->intr = rte_intr_instance_alloc(RTE_INTR_INSTANCE_F_PRIVATE);
    if (slot->intr == nullptr) {
        delete slot;
        return -ENOMEM;
    }
    int rc = rte_intr_fd_set(slot->intr, eventfd);
    if (rc == 0)
        rc = rte_intr_type_set(slot->intr, RTE_INTR_HANDLE_EXT);
    if (rc == 0)
        rc = rte_intr_callback_register(slot->intr, on_eventfd, slot);
    if (rc < 0) {
        dp_log(logtype_ecore, DpLevel::err, 0, "osal", __func__,
               "cannot register eventfd %d on the EAL interrupt thread: %d", eventfd, rc);
        free_slot(slot);
        return rc;
    }
    slot_ = slot;
    return 0;
}

void MsixIrq::release()
{
    Slot* slot = slot_;
    if (slot == nullptr)
        return;
    const bool on_intr_thread = rte_thread_is_intr();
    if (!on_intr_thread && !slot->pending)
        run_once_more(*slot);
    while (!slot->pending) {
        const int rc = rte_intr_callback_unregister(slot->intr, on_eventfd, slot);
        if (rc != -EAGAIN) {
            /* removed (or unknown to the EAL): the slot is ours again */
            slot->unregistered.store(true, std::memory_order_relaxed);
            break;
        }
        /* The callback is running. On the interrupt thread it can only be
         * our own caller: the removal waits until it returns. Elsewhere,
         * wait for it to finish. */
        if (on_intr_thread) {
            if (rte_intr_callback_unregister_pending(slot->intr, on_eventfd, slot, on_deferred_unregister) < 0)
                dp_log(logtype_ecore, DpLevel::err, 0, "osal", __func__,
                       "cannot defer removal of eventfd %d: the handler stays registered", slot->fd);
            else
                slot->pending = true;
            return;
        }
        usleep(100);
    }
    if (on_intr_thread && !slot->unregistered.load(std::memory_order_acquire))
        return; /* the EAL finishes the removal once this handler returns */
    while (!slot->unregistered.load(std::memory_order_acquire))
        usleep(100);
    slot_ = nullptr;
    slot->runs.load(std::memory_order_acquire);
    free_slot(slot);
}

bool msix_rearm(int eventfd)
{
    const uint64_t one = 1;
    return ::write(eventfd, &one, sizeof one) == sizeof one;
}

} // namespace cna::osal
