/* SPDX-License-Identifier: BSD-3-Clause
 * One copy of net_cna per process.
 *
 * A process may map the driver twice: the EAL loads librte_net_cna.so from
 * its driver directory (or a -d), while an RDMA application links
 * librte_rdma_cna.so, which carries net_cna too; two -d options may name two
 * builds. Each copy has its own ports, so two registered copies would split
 * a process's devices between drivers that cannot see each other's, and the
 * telemetry commands of the later copy, which owns no port, would answer
 * every request for the VFs' ones. Only the first copy registers anything.
 */
#pragma once

namespace cna::net {

/* True in the copy that serves this process: the first one asked, which
 * says so in a flag of its dynamic symbol table that later copies look for
 * in every loaded object. */
bool serving_copy();

} // namespace cna::net
