/* SPDX-License-Identifier: BSD-3-Clause */
#include "ecore_chain.h"

#include "osal_log.h"

namespace cna::ecore {

Status Chain::alloc(uint32_t num_elems, std::size_t elem_size, const char* what, std::size_t tail_bytes)
{
    if (num_elems < 2 || num_elems > MAX_ELEMS || (num_elems & (num_elems - 1)) != 0 || elem_size == 0) {
        osal::dp_log(osal::logtype_ecore, osal::DpLevel::err, 0, "ecore", __func__,
                     "%s: %u elements of %zu bytes: need a power of two in [2, %u]", what, num_elems,
                     elem_size, MAX_ELEMS);
        return Status::inval;
    }
    if (mem_.alloc(std::size_t{num_elems} * elem_size + tail_bytes, what) < 0)
        return Status::nomem;
    elem_size_ = elem_size;
    mask_ = static_cast<uint16_t>(num_elems - 1);
    reset();
    return Status::success;
}

void Chain::free()
{
    mem_.release();
    elem_size_ = 0;
    mask_ = 0;
    reset();
}

} // namespace cna::ecore
