/* SPDX-License-Identifier: BSD-3-Clause
 * The OS abstraction layer of cna on DPDK: everything ecore needs from the
 * operating system and the PCI function, and nothing else.
 */
#pragma once

#include "osal_irq.h"
#include "osal_log.h"
#include "osal_mem.h"
#include "osal_sync.h"
#include "osal_util.h"
#include "pci_function.h"
