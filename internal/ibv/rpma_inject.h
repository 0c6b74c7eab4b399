/*
 * rpma_inject.h: the fault-injection sites of package ibv.
 *
 * A site is one textual call of a C function that can fail. Each site's
 * code asks RPMA_INJECT with the site's name just before the call: a
 * non-zero answer is an errno, and the site then fails as the call would
 * (see the styles below) instead of making it. Built without the Go build
 * tag rpma_inject, RPMA_INJECT is the constant 0 and the compiler drops
 * the check: posts and polls cost what they did. With the tag,
 * inject_linux.go adds -DRPMA_INJECT to the package's CFLAGS and defines
 * rpma_inject_hit, which counts every site's occurrences and fails the
 * k-th occurrence of one armed site (InjectArm).
 *
 * RPMA_SITES is the one list of sites, in source order (the package's
 * files sorted by name, then in textual order within each), as
 * X(NAME, "called C function", STYLE). STYLE says how an injected failure
 * looks to the caller:
 *   RPMA_FAIL_RET     the call returns the errno (posts: nothing posted)
 *   RPMA_FAIL_NULL    the call returns NULL with errno set (or the
 *                     wrapper's *err_no out parameter)
 *   RPMA_FAIL_MINUS1  the call returns -1 with errno set (or the wrapper
 *                     returns the errno, its own convention)
 *   RPMA_FAIL_NEG     ibv_poll_cq returns minus the errno (no errno)
 *   RPMA_FAIL_EAI     rdma_getaddrinfo returns -1 with errno set
 * An injected failure of a destroy, dealloc, dereg or close skips the real
 * call: the object stays alive and a retry destroys it. The injected
 * ibv_wr_complete failures skip the whole batch (ibv_wr_start on). The
 * injected rdma_ack_cm_event failure is the one exception: it still acks
 * (an unacked event would make rdma_destroy_id wait forever).
 *
 * Not sites, and why:
 *   rdma_destroy_event_channel, rdma_destroy_qp, rdma_freeaddrinfo,
 *   ibv_ack_cq_events, ibv_ack_async_event, ibv_free_device_list, free:
 *     void, they cannot report a failure;
 *   ibv_get_device_name, rdma_get_local_addr, rdma_get_peer_addr,
 *   ibv_qp_to_qp_ex, gai_strerror: getters, no failure to report;
 *   ibv_wr_start, ibv_wr_atomic_write, ibv_wr_rdma_write, ibv_wr_flush,
 *   ibv_wr_set_sge, ibv_wr_set_sge_list: void builders whose failure
 *     ibv_wr_complete reports (its sites skip them).
 * Failing libc calls made from Go (epoll, fcntl, eventfd, mmap in
 * internal/core) are the Go sites of InjectGo (inject.go), numbered after
 * these.
 */
#ifndef RPMA_INJECT_H
#define RPMA_INJECT_H

#define RPMA_SITES(X) \
	X(GET_ASYNC_EVENT,          "ibv_get_async_event",       RPMA_FAIL_MINUS1) \
	X(GET_CM_EVENT,             "rdma_get_cm_event",         RPMA_FAIL_MINUS1) \
	X(ACK_CM_EVENT,             "rdma_ack_cm_event",         RPMA_FAIL_MINUS1) \
	X(GETADDRINFO,              "rdma_getaddrinfo",          RPMA_FAIL_EAI)    \
	X(RESOLVE_ADDR,             "rdma_resolve_addr",         RPMA_FAIL_MINUS1) \
	X(BIND_ADDR,                "rdma_bind_addr",            RPMA_FAIL_MINUS1) \
	X(ACCEPT,                   "rdma_accept",               RPMA_FAIL_MINUS1) \
	X(CONNECT,                  "rdma_connect",              RPMA_FAIL_MINUS1) \
	X(CREATE_QP,                "rdma_create_qp_ex",         RPMA_FAIL_MINUS1) \
	X(CREATE_EVENT_CHANNEL,     "rdma_create_event_channel", RPMA_FAIL_NULL)   \
	X(CREATE_ID,                "rdma_create_id",            RPMA_FAIL_MINUS1) \
	X(RESOLVE_ROUTE,            "rdma_resolve_route",        RPMA_FAIL_MINUS1) \
	X(LISTEN,                   "rdma_listen",               RPMA_FAIL_MINUS1) \
	X(REJECT,                   "rdma_reject",               RPMA_FAIL_MINUS1) \
	X(SET_OPTION,               "rdma_set_option",           RPMA_FAIL_MINUS1) \
	X(DISCONNECT,               "rdma_disconnect",           RPMA_FAIL_MINUS1) \
	X(NOTIFY,                   "rdma_notify",               RPMA_FAIL_MINUS1) \
	X(MIGRATE_ID,               "rdma_migrate_id",           RPMA_FAIL_MINUS1) \
	X(DESTROY_ID,               "rdma_destroy_id",           RPMA_FAIL_MINUS1) \
	X(REG_MR,                   "ibv_reg_mr",                RPMA_FAIL_NULL)   \
	X(ADVISE_MR,                "ibv_advise_mr",             RPMA_FAIL_RET)    \
	X(POST_SEND,                "ibv_post_send",             RPMA_FAIL_RET)    \
	X(POST_SEND_WRITE_READ,     "ibv_post_send",             RPMA_FAIL_RET)    \
	X(POST_SEND_BATCH,          "ibv_post_send",             RPMA_FAIL_RET)    \
	X(POST_SEND_INLINE8,        "ibv_post_send",             RPMA_FAIL_RET)    \
	X(WR_COMPLETE_ATOMIC_WRITE, "ibv_wr_complete",           RPMA_FAIL_RET)    \
	X(POST_SEND_ATOMIC,         "ibv_post_send",             RPMA_FAIL_RET)    \
	X(POST_RECV,                "ibv_post_recv",             RPMA_FAIL_RET)    \
	X(POST_SRQ_RECV,            "ibv_post_srq_recv",         RPMA_FAIL_RET)    \
	X(QUERY_QP,                 "ibv_query_qp",              RPMA_FAIL_RET)    \
	X(MODIFY_QP,                "ibv_modify_qp",             RPMA_FAIL_RET)    \
	X(CREATE_SRQ,               "ibv_create_srq",            RPMA_FAIL_NULL)   \
	X(DEREG_MR,                 "ibv_dereg_mr",              RPMA_FAIL_RET)    \
	X(DESTROY_SRQ,              "ibv_destroy_srq",           RPMA_FAIL_RET)    \
	X(RESIZE_CQ,                "ibv_resize_cq",             RPMA_FAIL_RET)    \
	X(QUERY_DEVICE_EX,          "ibv_query_device_ex",       RPMA_FAIL_RET)    \
	X(QUERY_PORT,               "ibv_query_port",            RPMA_FAIL_RET)    \
	X(GET_DEVICE_LIST,          "ibv_get_device_list",       RPMA_FAIL_NULL)   \
	X(GET_DEVICE_LIST_OPEN,     "ibv_get_device_list",       RPMA_FAIL_NULL)   \
	X(OPEN_DEVICE,              "ibv_open_device",           RPMA_FAIL_NULL)   \
	X(CLOSE_DEVICE,             "ibv_close_device",          RPMA_FAIL_MINUS1) \
	X(WR_COMPLETE_FLUSH,        "ibv_wr_complete",           RPMA_FAIL_RET)    \
	X(WR_COMPLETE_WRITE_FLUSH,  "ibv_wr_complete",           RPMA_FAIL_RET)    \
	X(ALLOC_MW,                 "ibv_alloc_mw",              RPMA_FAIL_NULL)   \
	X(POST_SEND_BIND_MW,        "ibv_post_send",             RPMA_FAIL_RET)    \
	X(DEALLOC_MW,               "ibv_dealloc_mw",            RPMA_FAIL_RET)    \
	X(POLL_CQ,                  "ibv_poll_cq",               RPMA_FAIL_NEG)    \
	X(ALLOC_PD,                 "ibv_alloc_pd",              RPMA_FAIL_NULL)   \
	X(CALLOC_WC,                "calloc",                    RPMA_FAIL_NULL)   \
	X(GET_CQ_EVENT,             "ibv_get_cq_event",          RPMA_FAIL_MINUS1) \
	X(REQ_NOTIFY_CQ_REARM,      "ibv_req_notify_cq",         RPMA_FAIL_RET)    \
	X(DEALLOC_PD,               "ibv_dealloc_pd",            RPMA_FAIL_RET)    \
	X(CREATE_COMP_CHANNEL,      "ibv_create_comp_channel",   RPMA_FAIL_NULL)   \
	X(DESTROY_COMP_CHANNEL,     "ibv_destroy_comp_channel",  RPMA_FAIL_RET)    \
	X(CREATE_CQ,                "ibv_create_cq",             RPMA_FAIL_NULL)   \
	X(REQ_NOTIFY_CQ,            "ibv_req_notify_cq",         RPMA_FAIL_RET)    \
	X(DESTROY_CQ,               "ibv_destroy_cq",            RPMA_FAIL_RET)

/* The styles, in the order of the Go type InjectStyle. */
enum rpma_fail_style {
	RPMA_FAIL_RET,
	RPMA_FAIL_NULL,
	RPMA_FAIL_MINUS1,
	RPMA_FAIL_NEG,
	RPMA_FAIL_EAI,
};

#define RPMA_SITE_ENUM_(name, call, style) RPMA_SITE_##name,
enum rpma_inject_site {
	RPMA_SITES(RPMA_SITE_ENUM_)
	RPMA_SITE_COUNT
};
#undef RPMA_SITE_ENUM_

/*
 * The build tag rpma_inject defines RPMA_INJECT (as 1) on the compiler's
 * command line; it is then redefined here as the function-like macro, so
 * it is first undefined.
 */
#ifdef RPMA_INJECT
#undef RPMA_INJECT
int rpma_inject_hit(int site);
#define RPMA_INJECT(name) rpma_inject_hit(RPMA_SITE_##name)
#else
#define RPMA_INJECT(name) 0
#endif

#endif
