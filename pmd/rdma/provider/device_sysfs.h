/* SPDX-License-Identifier: BSD-3-Clause */
#pragma once

#include <string>

#include "cna_rdma.h"

namespace cna::verbs {

/* Writes the attributes libibverbs reads from sysfs for the device whose
 * directory is `ibdev_path`; false with the reason in *error. */
bool publish_attributes(const std::string& ibdev_path, cna_rdma_dev* rdma, std::string* error);

} // namespace cna::verbs
