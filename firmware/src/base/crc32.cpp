/* SPDX-License-Identifier: BSD-3-Clause
 * ISA-L's CRC: it folds with carry-less multiplication (PCLMULQDQ, or
 * VPCLMULQDQ where there is one), which keeps the ICRC of every RoCE
 * packet far from being the bottleneck of the engine.
 */
#include "base/crc32.h"

#include <isa-l/crc.h>

namespace cna::fw {

uint32_t crc32(uint32_t crc, const void* data, std::size_t len)
{
    /* ISA-L's prototype lacks the const; it only reads the buffer. */
    return crc32_gzip_refl(crc, const_cast<uint8_t*>(static_cast<const uint8_t*>(data)), len);
}

} // namespace cna::fw
