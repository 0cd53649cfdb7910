/* SPDX-License-Identifier: BSD-3-Clause */
#include "osal_sync.h"

#include <sched.h>

#include <ctime>

#include <rte_cycles.h>

namespace cna::osal {

void udelay(uint32_t usecs) { rte_delay_us_block(usecs); }

void yield() { sched_yield(); }

void usleep(uint32_t usecs) { rte_delay_us_sleep(usecs); }

void msleep(uint32_t msecs) { rte_delay_us_sleep(msecs * 1000u); }

uint64_t time_ns()
{
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return uint64_t(ts.tv_sec) * 1000000000u + uint64_t(ts.tv_nsec);
}

} // namespace cna::osal
