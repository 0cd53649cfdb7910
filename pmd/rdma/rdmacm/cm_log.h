/* SPDX-License-Identifier: BSD-3-Clause
 * CNA_CM_LOG=1: what the CM does, on stderr, each line stamped with the
 * monotonic clock: the MADs in and out (cm_device) and the listens
 * (cm_service), for seeing how a connection is made, or is not, and for
 * a script to know when a listener is there to connect to.
 */
#pragma once

namespace cna::rdmacm {

bool cm_log_on();
void cm_log(const char* format, ...) __attribute__((format(printf, 1, 2)));

} // namespace cna::rdmacm
