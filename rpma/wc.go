package rpma

import (
	"errors"
	"strconv"
)

// WCStatus mirrors enum ibv_wc_status: the status of a work completion.
type WCStatus uint32

// Work completion statuses, with the values of enum ibv_wc_status.
const (
	// WCSuccess mirrors IBV_WC_SUCCESS.
	WCSuccess WCStatus = 0
	// WCLocLenErr mirrors IBV_WC_LOC_LEN_ERR.
	WCLocLenErr WCStatus = 1
	// WCLocQPOpErr mirrors IBV_WC_LOC_QP_OP_ERR.
	WCLocQPOpErr WCStatus = 2
	// WCLocEECOpErr mirrors IBV_WC_LOC_EEC_OP_ERR.
	WCLocEECOpErr WCStatus = 3
	// WCLocProtErr mirrors IBV_WC_LOC_PROT_ERR.
	WCLocProtErr WCStatus = 4
	// WCWRFlushErr mirrors IBV_WC_WR_FLUSH_ERR: the work request was
	// flushed because the queue pair is in the error state.
	WCWRFlushErr WCStatus = 5
	// WCMWBindErr mirrors IBV_WC_MW_BIND_ERR.
	WCMWBindErr WCStatus = 6
	// WCBadRespErr mirrors IBV_WC_BAD_RESP_ERR.
	WCBadRespErr WCStatus = 7
	// WCLocAccessErr mirrors IBV_WC_LOC_ACCESS_ERR.
	WCLocAccessErr WCStatus = 8
	// WCRemInvReqErr mirrors IBV_WC_REM_INV_REQ_ERR.
	WCRemInvReqErr WCStatus = 9
	// WCRemAccessErr mirrors IBV_WC_REM_ACCESS_ERR.
	WCRemAccessErr WCStatus = 10
	// WCRemOpErr mirrors IBV_WC_REM_OP_ERR.
	WCRemOpErr WCStatus = 11
	// WCRetryExcErr mirrors IBV_WC_RETRY_EXC_ERR: the transport retry
	// counter was exceeded, typically because the peer went away.
	WCRetryExcErr WCStatus = 12
	// WCRNRRetryExcErr mirrors IBV_WC_RNR_RETRY_EXC_ERR.
	WCRNRRetryExcErr WCStatus = 13
	// WCLocRDDViolErr mirrors IBV_WC_LOC_RDD_VIOL_ERR.
	WCLocRDDViolErr WCStatus = 14
	// WCRemInvRDReqErr mirrors IBV_WC_REM_INV_RD_REQ_ERR.
	WCRemInvRDReqErr WCStatus = 15
	// WCRemAbortErr mirrors IBV_WC_REM_ABORT_ERR.
	WCRemAbortErr WCStatus = 16
	// WCInvEECNErr mirrors IBV_WC_INV_EECN_ERR.
	WCInvEECNErr WCStatus = 17
	// WCInvEECStateErr mirrors IBV_WC_INV_EEC_STATE_ERR.
	WCInvEECStateErr WCStatus = 18
	// WCFatalErr mirrors IBV_WC_FATAL_ERR.
	WCFatalErr WCStatus = 19
	// WCRespTimeoutErr mirrors IBV_WC_RESP_TIMEOUT_ERR.
	WCRespTimeoutErr WCStatus = 20
	// WCGeneralErr mirrors IBV_WC_GENERAL_ERR.
	WCGeneralErr WCStatus = 21
	// WCTMErr mirrors IBV_WC_TM_ERR.
	WCTMErr WCStatus = 22
	// WCTMRndvIncomplete mirrors IBV_WC_TM_RNDV_INCOMPLETE.
	WCTMRndvIncomplete WCStatus = 23
)

// wcStatusStr is the table of ibv_wc_status_str (rdma-core
// libibverbs/enum_strs.c), indexed by status.
var wcStatusStr = [...]string{
	WCSuccess:          "success",
	WCLocLenErr:        "local length error",
	WCLocQPOpErr:       "local QP operation error",
	WCLocEECOpErr:      "local EE context operation error",
	WCLocProtErr:       "local protection error",
	WCWRFlushErr:       "Work Request Flushed Error",
	WCMWBindErr:        "memory management operation error",
	WCBadRespErr:       "bad response error",
	WCLocAccessErr:     "local access error",
	WCRemInvReqErr:     "remote invalid request error",
	WCRemAccessErr:     "remote access error",
	WCRemOpErr:         "remote operation error",
	WCRetryExcErr:      "transport retry counter exceeded",
	WCRNRRetryExcErr:   "RNR retry counter exceeded",
	WCLocRDDViolErr:    "local RDD violation error",
	WCRemInvRDReqErr:   "remote invalid RD request",
	WCRemAbortErr:      "aborted error",
	WCInvEECNErr:       "invalid EE context number",
	WCInvEECStateErr:   "invalid EE context state",
	WCFatalErr:         "fatal error",
	WCRespTimeoutErr:   "response timeout error",
	WCGeneralErr:       "general error",
	WCTMErr:            "TM error",
	WCTMRndvIncomplete: "TM software rendezvous",
}

// String returns the same text as ibv_wc_status_str, including "unknown" for
// values it does not know.
func (s WCStatus) String() string {
	if int(s) < len(wcStatusStr) {
		return wcStatusStr[s]
	}
	return "unknown"
}

// WCOpcode mirrors enum ibv_wc_opcode: the kind of work request a work
// completion belongs to.
type WCOpcode uint32

// Work completion opcodes, with the values of enum ibv_wc_opcode.
const (
	// WCSend mirrors IBV_WC_SEND.
	WCSend WCOpcode = 0
	// WCRDMAWrite mirrors IBV_WC_RDMA_WRITE.
	WCRDMAWrite WCOpcode = 1
	// WCRDMARead mirrors IBV_WC_RDMA_READ.
	WCRDMARead WCOpcode = 2
	// WCCompSwap mirrors IBV_WC_COMP_SWAP.
	WCCompSwap WCOpcode = 3
	// WCFetchAdd mirrors IBV_WC_FETCH_ADD.
	WCFetchAdd WCOpcode = 4
	// WCBindMW mirrors IBV_WC_BIND_MW.
	WCBindMW WCOpcode = 5
	// WCLocalInv mirrors IBV_WC_LOCAL_INV.
	WCLocalInv WCOpcode = 6
	// WCTSO mirrors IBV_WC_TSO.
	WCTSO WCOpcode = 7
	// WCFlush mirrors IBV_WC_FLUSH (rdma-core 45 and later): a native
	// flush completed.
	WCFlush WCOpcode = 8
	// WCAtomicWrite mirrors IBV_WC_ATOMIC_WRITE (rdma-core 44 and later):
	// a native atomic write completed.
	WCAtomicWrite WCOpcode = 9
	// WCRecv mirrors IBV_WC_RECV. Receive opcodes have this bit set, so
	// op&WCRecv != 0 tests for any receive, as in C.
	WCRecv WCOpcode = 1 << 7
	// WCRecvRDMAWithImm mirrors IBV_WC_RECV_RDMA_WITH_IMM.
	WCRecvRDMAWithImm WCOpcode = 129
	// WCTMAdd mirrors IBV_WC_TM_ADD.
	WCTMAdd WCOpcode = 130
	// WCTMDel mirrors IBV_WC_TM_DEL.
	WCTMDel WCOpcode = 131
	// WCTMSync mirrors IBV_WC_TM_SYNC.
	WCTMSync WCOpcode = 132
	// WCTMRecv mirrors IBV_WC_TM_RECV.
	WCTMRecv WCOpcode = 133
	// WCTMNoTag mirrors IBV_WC_TM_NO_TAG.
	WCTMNoTag WCOpcode = 134
	// WCDriver1 mirrors IBV_WC_DRIVER1.
	WCDriver1 WCOpcode = 135
	// WCDriver2 mirrors IBV_WC_DRIVER2.
	WCDriver2 WCOpcode = 136
	// WCDriver3 mirrors IBV_WC_DRIVER3.
	WCDriver3 WCOpcode = 137
)

var wcOpcodeStr = map[WCOpcode]string{
	WCSend:            "IBV_WC_SEND",
	WCRDMAWrite:       "IBV_WC_RDMA_WRITE",
	WCRDMARead:        "IBV_WC_RDMA_READ",
	WCCompSwap:        "IBV_WC_COMP_SWAP",
	WCFetchAdd:        "IBV_WC_FETCH_ADD",
	WCBindMW:          "IBV_WC_BIND_MW",
	WCLocalInv:        "IBV_WC_LOCAL_INV",
	WCTSO:             "IBV_WC_TSO",
	WCFlush:           "IBV_WC_FLUSH",
	WCAtomicWrite:     "IBV_WC_ATOMIC_WRITE",
	WCRecv:            "IBV_WC_RECV",
	WCRecvRDMAWithImm: "IBV_WC_RECV_RDMA_WITH_IMM",
	WCTMAdd:           "IBV_WC_TM_ADD",
	WCTMDel:           "IBV_WC_TM_DEL",
	WCTMSync:          "IBV_WC_TM_SYNC",
	WCTMRecv:          "IBV_WC_TM_RECV",
	WCTMNoTag:         "IBV_WC_TM_NO_TAG",
	WCDriver1:         "IBV_WC_DRIVER1",
	WCDriver2:         "IBV_WC_DRIVER2",
	WCDriver3:         "IBV_WC_DRIVER3",
}

// String returns the C name of op (libibverbs has no string function for
// opcodes), for example "IBV_WC_RDMA_READ", or "WCOpcode(n)" for values
// verbs.h does not define.
func (op WCOpcode) String() string {
	if s, ok := wcOpcodeStr[op]; ok {
		return s
	}
	return codeSuffix("WCOpcode", int64(op))
}

// WCError is a failed work completion: an operation that was posted
// successfully but completed with a status other than [WCSuccess]. In
// librpma it is the ibv_wc returned by rpma_cq_get_wc with
// wc.status != IBV_WC_SUCCESS.
//
// Match a WCError with errors.Is:
//   - any WCError matches [ErrCompletion];
//   - a WCError with Status [WCWRFlushErr] matches [ErrWRFlushed];
//   - a WCError matches a *WCError target with the same Status, whatever the
//     target's other fields, so
//     errors.Is(err, &rpma.WCError{Status: rpma.WCRemAccessErr}) tests for a
//     remote access error.
//
// Use errors.As to read the fields. A WCError carries no librpma code, so
// [CodeOf] reports none.
type WCError struct {
	// Status is the completion status, never WCSuccess for a real error.
	Status WCStatus
	// VendorErr is the vendor-specific error syndrome (wc.vendor_err).
	VendorErr uint32
	// QPNum is the number of the local queue pair (wc.qp_num).
	QPNum uint32
	// WRID is the work request ID (wc.wr_id), the value librpma calls
	// op_context.
	WRID uint64
	// Opcode is the opcode reported by the provider. Verbs leaves it
	// undefined for failed completions (only wr_id, status, qp_num and
	// vendor_err are valid), so treat it as a hint.
	Opcode WCOpcode
}

var _ error = (*WCError)(nil)

// Error returns, for example, "rpma: work completion failed: remote access
// error (status 10, vendor error 0x0, qp 17, wr_id 5)".
func (e *WCError) Error() string {
	b := make([]byte, 0, 128)
	b = append(b, "rpma: work completion failed: "...)
	b = append(b, e.Status.String()...)
	b = append(b, " (status "...)
	b = strconv.AppendUint(b, uint64(e.Status), 10)
	b = append(b, ", vendor error 0x"...)
	b = strconv.AppendUint(b, uint64(e.VendorErr), 16)
	b = append(b, ", qp "...)
	b = strconv.AppendUint(b, uint64(e.QPNum), 10)
	b = append(b, ", wr_id "...)
	b = strconv.AppendUint(b, e.WRID, 10)
	b = append(b, ')')
	return string(b)
}

// Is reports whether target is [ErrCompletion], is [ErrWRFlushed] and e was
// flushed, or is a non-nil *WCError with the same Status as e.
func (e *WCError) Is(target error) bool {
	switch target {
	case ErrCompletion:
		return true
	case ErrWRFlushed:
		return e.Status == WCWRFlushErr
	}
	if t, ok := target.(*WCError); ok && t != nil {
		return t.Status == e.Status
	}
	return false
}

// Sentinels matched by every [*WCError] or by some of them.
var (
	// ErrCompletion matches any [*WCError]: a posted operation failed.
	ErrCompletion = errors.New("rpma: work completion failed")

	// ErrWRFlushed matches a [*WCError] with Status [WCWRFlushErr]: the
	// work request was flushed, not executed, because the queue pair had
	// gone to the error state (an earlier failure or a lost connection).
	ErrWRFlushed = errors.New("rpma: work completion failed: Work Request Flushed Error")
)
