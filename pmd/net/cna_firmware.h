/* SPDX-License-Identifier: BSD-3-Clause
 * Which firmware image ecore loads at hw_init. fw_file= names it; without
 * it, the first of cna_fw.bin and cna_fw_zipped.bin found in the search path
 * (each directory of $CNA_FIRMWARE_PATH, ':'-separated, then
 * /lib/firmware/cna); with none there, the image compiled into the driver.
 * ecore parses and validates whichever it gets.
 */
#pragma once

#include <string>

namespace cna::net {

struct EthPort;

/* Fills port->fw_image (left empty for the compiled-in image) and *source
 * (the file's path, or a description of the compiled-in image). Returns 0
 * or -errno with the path named in the log. */
int load_firmware(EthPort* port, std::string* source);

} // namespace cna::net
