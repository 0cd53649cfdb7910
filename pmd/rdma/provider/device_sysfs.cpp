/* SPDX-License-Identifier: BSD-3-Clause
 * A cna device's attributes in sysfs, in the kernel's formats. libibverbs
 * reads some of a device's facts there rather than asking its provider:
 * the node GUID (ibv_get_device_guid, before any open), the GID table and
 * each GID's type (ibv_query_gid, ibv_query_gid_type, ibv_query_gid_table
 * without kernel verbs), the P_Keys (ibv_query_pkey). A kernel driver
 * writes them; cna's device lives in the process, so the provider does,
 * into the tree cna-rdma-run made for the process.
 */
#include "device_sysfs.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace cna::verbs {

namespace {

namespace fs = std::filesystem;

bool write_attribute(const fs::path& file, const std::string& value, std::string* error)
{
    std::error_code ec;
    fs::create_directories(file.parent_path(), ec);
    std::ofstream out(file, std::ios::trunc);
    out << value << '\n';
    out.close();
    if (!out) {
        *error = file.string() + ": " + std::strerror(errno);
        return false;
    }
    return true;
}

/* 16 bytes as the kernel prints a GID: eight groups of four hex digits. */
std::string gid_text(const uint8_t* raw, int groups)
{
    std::string s;
    char group[6];
    for (int i = 0; i < groups; i++) {
        std::snprintf(group, sizeof(group), "%s%02x%02x", i == 0 ? "" : ":", raw[2 * i], raw[2 * i + 1]);
        s += group;
    }
    return s;
}

bool write_attributes(const std::string& ibdev_path, cna_rdma_dev* rdma, std::string* error)
{
    ibv_device_attr dev{};
    ibv_port_attr port{};
    if (cna_rdma_query_device(rdma, &dev) != 0 || cna_rdma_query_port(rdma, 1, &port) != 0) {
        *error = "cannot query the RDMA device";
        return false;
    }
    const fs::path dir(ibdev_path);
    uint8_t guid[8];
    std::memcpy(guid, &dev.node_guid, sizeof(guid));
    char text[64];
    bool ok = write_attribute(dir / "node_guid", gid_text(guid, 4), error) &&
              write_attribute(dir / "sys_image_guid", gid_text(guid, 4), error) &&
              write_attribute(dir / "fw_ver", dev.fw_ver, error) &&
              (std::snprintf(text, sizeof(text), "0x%x", dev.hw_ver), write_attribute(dir / "hw_rev", text, error)) &&
              write_attribute(dir / "hca_type", "cna", error) &&
              write_attribute(dir / "board_id", "cna software adapter", error) &&
              write_attribute(dir / "node_desc", fs::path(ibdev_path).filename().string(), error);
    const fs::path p1 = dir / "ports" / "1";
    ok = ok && write_attribute(p1 / "link_layer", "Ethernet", error) && write_attribute(p1 / "lid", "0x0", error) &&
         write_attribute(p1 / "sm_lid", "0x0", error) && write_attribute(p1 / "pkeys" / "0", "0xffff", error);
    for (int i = 0; ok && i < port.gid_tbl_len; i++) {
        ibv_gid gid{};
        /* Indexes past the table's end read as zero, as the kernel's do. */
        (void)cna_rdma_query_gid(rdma, 1, i, &gid);
        ok = write_attribute(p1 / "gids" / std::to_string(i), gid_text(gid.raw, 8), error) &&
             write_attribute(p1 / "gid_attrs" / "types" / std::to_string(i), "RoCE v2", error);
    }
    return ok;
}

} // namespace

bool publish_attributes(const std::string& ibdev_path, cna_rdma_dev* rdma, std::string* error)
{
    /* libibverbs tells a device it listed before from a new one by its
     * directory's modification time: the files written keep it as it was. */
    struct stat before;
    if (stat(ibdev_path.c_str(), &before) != 0) {
        *error = ibdev_path + ": " + std::strerror(errno);
        return false;
    }
    const timespec times[2] = {before.st_atim, before.st_mtim};
    const bool ok = write_attributes(ibdev_path, rdma, error);
    if (utimensat(AT_FDCWD, ibdev_path.c_str(), times, 0) != 0 && ok) {
        *error = ibdev_path + ": " + std::strerror(errno);
        return false;
    }
    return ok;
}

} // namespace cna::verbs
