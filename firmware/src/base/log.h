/* SPDX-License-Identifier: BSD-3-Clause
 * Adapter logging: every line goes through the LogSink the embedding host
 * installed (adapter.h); the default prints warnings and errors to stderr.
 */
#pragma once

#include "cna_fw/adapter.h"

namespace cna::fw {

void log(LogLevel level, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

} // namespace cna::fw
