/* SPDX-License-Identifier: BSD-3-Clause
 * rdma_getaddrinfo and the endpoints made from what it finds
 * (rdma_create_ep): names and ports resolved as getaddrinfo(3) does, the
 * RDMA part (QP type, port space) from the hints.
 */
#include <netdb.h>
#include <rdma/rdma_verbs.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "cm_service.h"

using cna::rdmacm::fail;

namespace {

sockaddr* copy_of(const sockaddr* addr, socklen_t len)
{
    auto* copy = static_cast<sockaddr*>(std::malloc(len));
    if (copy != nullptr)
        std::memcpy(copy, addr, len);
    return copy;
}

} // namespace

extern "C" {

void rdma_freeaddrinfo(rdma_addrinfo* res)
{
    while (res != nullptr) {
        rdma_addrinfo* next = res->ai_next;
        std::free(res->ai_src_addr);
        std::free(res->ai_dst_addr);
        std::free(res->ai_src_canonname);
        std::free(res->ai_dst_canonname);
        std::free(res->ai_route);
        std::free(res->ai_connect);
        std::free(res);
        res = next;
    }
}

int rdma_getaddrinfo(const char* node, const char* service, const rdma_addrinfo* hints, rdma_addrinfo** res)
{
    if (res == nullptr || (node == nullptr && service == nullptr))
        return fail(EINVAL);
    const int flags = hints != nullptr ? hints->ai_flags : 0;
    addrinfo want{};
    want.ai_family = hints != nullptr && (flags & RAI_FAMILY) ? hints->ai_family : AF_UNSPEC;
    want.ai_socktype = SOCK_STREAM;
    want.ai_flags = (flags & RAI_PASSIVE ? AI_PASSIVE : 0) | (flags & RAI_NUMERICHOST ? AI_NUMERICHOST : 0);
    addrinfo* found = nullptr;
    if (int rc = getaddrinfo(node, service, &want, &found); rc != 0)
        return fail(rc == EAI_SYSTEM ? errno : rc == EAI_MEMORY ? ENOMEM : EADDRNOTAVAIL);
    auto* ai = static_cast<rdma_addrinfo*>(std::calloc(1, sizeof(rdma_addrinfo)));
    if (ai == nullptr) {
        freeaddrinfo(found);
        return fail(ENOMEM);
    }
    ai->ai_flags = flags;
    ai->ai_family = found->ai_family;
    ai->ai_qp_type = hints != nullptr && hints->ai_qp_type != 0 ? hints->ai_qp_type : IBV_QPT_RC;
    ai->ai_port_space = hints != nullptr && hints->ai_port_space != 0
                            ? hints->ai_port_space
                            : (ai->ai_qp_type == IBV_QPT_UD ? RDMA_PS_UDP : RDMA_PS_TCP);
    sockaddr** mine = flags & RAI_PASSIVE ? &ai->ai_src_addr : &ai->ai_dst_addr;
    *mine = copy_of(found->ai_addr, found->ai_addrlen);
    (flags & RAI_PASSIVE ? ai->ai_src_len : ai->ai_dst_len) = found->ai_addrlen;
    if (!(flags & RAI_PASSIVE) && hints != nullptr && hints->ai_src_addr != nullptr) {
        ai->ai_src_addr = copy_of(hints->ai_src_addr, hints->ai_src_len);
        ai->ai_src_len = hints->ai_src_len;
    }
    freeaddrinfo(found);
    if (*mine == nullptr) {
        rdma_freeaddrinfo(ai);
        return fail(ENOMEM);
    }
    *res = ai;
    return 0;
}

int rdma_create_ep(rdma_cm_id** id, rdma_addrinfo* res, ibv_pd* pd, ibv_qp_init_attr* qp_init_attr)
{
    if (id == nullptr || res == nullptr)
        return fail(EINVAL);
    rdma_cm_id* made = nullptr;
    if (rdma_create_id(nullptr, &made, nullptr, static_cast<rdma_port_space>(res->ai_port_space)) != 0)
        return -1;
    auto undo = [&] {
        const int err = errno;
        rdma_destroy_id(made);
        return fail(err);
    };
    if (qp_init_attr != nullptr) /* the endpoint's QP is of the type its address info says */
        qp_init_attr->qp_type = static_cast<ibv_qp_type>(res->ai_qp_type);
    if (res->ai_flags & RAI_PASSIVE) {
        if (rdma_bind_addr(made, res->ai_src_addr) != 0)
            return undo();
        if (qp_init_attr != nullptr) {
            cna::rdmacm::id_of(made)->qp_template = *qp_init_attr;
            made->pd = pd;
        }
    } else {
        if (rdma_resolve_addr(made, res->ai_src_addr, res->ai_dst_addr, 2000) != 0 ||
            rdma_resolve_route(made, 2000) != 0)
            return undo();
        if (qp_init_attr != nullptr && rdma_create_qp(made, pd, qp_init_attr) != 0)
            return undo();
    }
    *id = made;
    return 0;
}

void rdma_destroy_ep(rdma_cm_id* id)
{
    if (id == nullptr)
        return;
    if (id->qp != nullptr)
        rdma_destroy_qp(id);
    if (id->srq != nullptr)
        rdma_destroy_srq(id);
    rdma_destroy_id(id);
}

} // extern "C"
