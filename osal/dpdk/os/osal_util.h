/* SPDX-License-Identifier: BSD-3-Clause
 * OSAL utilities: CRC32 and zlib inflation (for the zipped firmware image,
 * the guide's OSAL_UNZIP_DATA), and reading a firmware file.
 */
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace cna::osal {

/* CRC-32 (IEEE 802.3, as zlib computes it). */
uint32_t crc32(const void* data, std::size_t len, uint32_t crc = 0);

/* Inflates a zlib stream into exactly `out_len` bytes at `out`. Returns 0,
 * -EINVAL for a corrupt stream or -EMSGSIZE when the inflated size differs. */
int unzip(const void* in, std::size_t in_len, void* out, std::size_t out_len);

/* Reads a whole file (a binary firmware image). Returns 0 or -errno. */
int read_file(const std::string& path, std::vector<uint8_t>* out);

} // namespace cna::osal
