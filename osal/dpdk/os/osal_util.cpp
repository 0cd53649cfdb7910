/* SPDX-License-Identifier: BSD-3-Clause */
#include "osal_util.h"

#include <cerrno>
#include <cstdio>
#include <limits>

#include <zlib.h>

namespace cna::osal {

uint32_t crc32(const void* data, std::size_t len, uint32_t crc)
{
    const auto* p = static_cast<const Bytef*>(data);
    uLong c = crc;
    while (len > 0) {
        uInt chunk = len > std::numeric_limits<uInt>::max() ? std::numeric_limits<uInt>::max()
                                                             : static_cast<uInt>(len);
        c = ::crc32(c, p, chunk);
        p += chunk;
        len -= chunk;
    }
    return static_cast<uint32_t>(c);
}

int unzip(const void* in, std::size_t in_len, void* out, std::size_t out_len)
{
    uLongf produced = out_len;
    int rc = ::uncompress(static_cast<Bytef*>(out), &produced, static_cast<const Bytef*>(in), in_len);
    if (rc == Z_BUF_ERROR)
        return -EMSGSIZE; /* inflates to more than out_len (or is truncated) */
    if (rc != Z_OK)
        return -EINVAL;
    return produced == out_len ? 0 : -EMSGSIZE;
}

int read_file(const std::string& path, std::vector<uint8_t>* out)
{
    FILE* f = fopen(path.c_str(), "rb");
    if (f == nullptr)
        return -errno;
    out->clear();
    uint8_t buf[65536];
    std::size_t n;
    while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
        out->insert(out->end(), buf, buf + n);
    int rc = ferror(f) ? -EIO : 0;
    fclose(f);
    return rc;
}

} // namespace cna::osal
