/* SPDX-License-Identifier: BSD-3-Clause
 * OSAL interrupts: an MSI-X vector's eventfd handled on the EAL interrupt
 * thread.
 */
#pragma once

#include <cstdint>

namespace cna::osal {

class MsixIrq {
public:
    using Handler = void (*)(void* arg);

    MsixIrq() = default;
    ~MsixIrq() { release(); }
    MsixIrq(const MsixIrq&) = delete;
    MsixIrq& operator=(const MsixIrq&) = delete;

    /* Runs handler(arg) on the EAL interrupt thread each time the eventfd
     * signals (the eventfd is drained first). Returns 0 or -errno. */
    int request(int eventfd, Handler handler, void* arg);

    /* Unregisters the handler. Safe from any thread, including the interrupt
     * thread and the handler itself (the removal is then deferred until the
     * handler returns, and the next release on another thread waits for it
     * to be done); otherwise, on return the handler no longer runs and the
     * EAL no longer watches the fd: it may be closed. */
    void release();

    bool requested() const { return slot_ != nullptr; }

    struct Slot; /* OSAL-internal */

private:
    Slot* slot_ = nullptr;
};

/* The vector's handler runs once more, as if the device had signalled its
 * eventfd: for a handler that leaves work for a later run rather than hold
 * the interrupt thread. */
bool msix_rearm(int eventfd); /* false: the fd cannot be signalled */

} // namespace cna::osal
