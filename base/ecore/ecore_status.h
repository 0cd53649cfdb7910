/* SPDX-License-Identifier: BSD-3-Clause
 * ecore status codes. Every ecore entry point that can fail returns one; the
 * PMD turns it into -errno at its DPDK boundary (status_to_errno).
 */
#pragma once

namespace cna::ecore {

enum class Status : int {
    success = 0,
    inval,    /* bad argument, or the firmware rejected a field */
    nomem,    /* host memory */
    nospc,    /* a device table or ring is full */
    noent,    /* the object (filter, queue) does not exist */
    timeout,  /* the device did not answer in time */
    busy,     /* the object is in the wrong state for the request */
    again,    /* a transient shortage (PTT pool), retry later */
    notimpl,  /* the device or ecore does not support the request */
    io,       /* the device answered with an error or garbage */
    fault,    /* a DMA address could not be reached by the device */
    nodev,    /* no device behind the PCI function (e.g. MFW not running) */
    perm,     /* not permitted: a VF's PF refused it by its policy for the VF */
};

const char* status_name(Status status);

/* Negative errno for a status (0 for success). */
int status_to_errno(Status status);

} // namespace cna::ecore
