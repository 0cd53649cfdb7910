/* SPDX-License-Identifier: BSD-3-Clause
 * The firmware search path (cna_firmware.h), in the spirit of the kernel's
 * request_firmware: an image installed in a known place replaces the
 * compiled-in one without rebuilding the driver or touching devargs.
 */
#include "cna_firmware.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <unistd.h>
#include <vector>

#include "cna_eth_port.h"
#include "cna_log.h"
#include "osal_util.h"

namespace cna::net {
namespace {

constexpr char PATH_ENV[] = "CNA_FIRMWARE_PATH";
constexpr char SYSTEM_DIR[] = "/lib/firmware/cna";
/* In order of preference within one directory. */
constexpr const char* IMAGE_NAMES[] = {"cna_fw.bin", "cna_fw_zipped.bin"};

std::vector<std::string> search_dirs()
{
    std::vector<std::string> dirs;
    if (const char* env = getenv(PATH_ENV)) {
        std::string_view rest = env;
        while (!rest.empty()) {
            const std::size_t colon = rest.find(':');
            const std::string_view dir = rest.substr(0, colon);
            if (!dir.empty())
                dirs.emplace_back(dir);
            rest = colon == std::string_view::npos ? std::string_view{} : rest.substr(colon + 1);
        }
    }
    dirs.emplace_back(SYSTEM_DIR);
    return dirs;
}

int read_image(EthPort* port, const std::string& path)
{
    if (int rc = osal::read_file(path, &port->fw_image); rc != 0) {
        PMD_LOG(ERR, port, "cannot read firmware file '%s': %s", path.c_str(), strerror(-rc));
        return rc;
    }
    return 0;
}

} // namespace

int load_firmware(EthPort* port, std::string* source)
{
    port->fw_image.clear();
    if (!port->devargs.fw_file.empty()) {
        *source = port->devargs.fw_file;
        if (int rc = read_image(port, *source); rc != 0)
            return rc;
        PMD_LOG(INFO, port, "firmware '%s' (fw_file=, %zu bytes)", source->c_str(), port->fw_image.size());
        return 0;
    }
    std::string tried;
    for (const std::string& dir : search_dirs()) {
        for (const char* name : IMAGE_NAMES) {
            const std::string path = dir + "/" + name;
            /* Absent is the normal case; a file that is there must be readable. */
            if (access(path.c_str(), F_OK) != 0) {
                tried += (tried.empty() ? "" : ", ") + path;
                continue;
            }
            *source = path;
            if (int rc = read_image(port, path); rc != 0)
                return rc;
            PMD_LOG(INFO, port, "firmware '%s' (search path, %zu bytes)", path.c_str(), port->fw_image.size());
            return 0;
        }
    }
    *source = "compiled-in image";
    PMD_LOG(INFO, port, "firmware: the compiled-in image (none of %s)", tried.c_str());
    return 0;
}

} // namespace cna::net
