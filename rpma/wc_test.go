package rpma_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gorpma/rpma/rpma"
)

func TestWCStatusStrings(t *testing.T) {
	// enum ibv_wc_status and ibv_wc_status_str of rdma-core
	// (libibverbs/verbs.h, libibverbs/enum_strs.c).
	want := []struct {
		status rpma.WCStatus
		value  uint32
		str    string
	}{
		{rpma.WCSuccess, 0, "success"},
		{rpma.WCLocLenErr, 1, "local length error"},
		{rpma.WCLocQPOpErr, 2, "local QP operation error"},
		{rpma.WCLocEECOpErr, 3, "local EE context operation error"},
		{rpma.WCLocProtErr, 4, "local protection error"},
		{rpma.WCWRFlushErr, 5, "Work Request Flushed Error"},
		{rpma.WCMWBindErr, 6, "memory management operation error"},
		{rpma.WCBadRespErr, 7, "bad response error"},
		{rpma.WCLocAccessErr, 8, "local access error"},
		{rpma.WCRemInvReqErr, 9, "remote invalid request error"},
		{rpma.WCRemAccessErr, 10, "remote access error"},
		{rpma.WCRemOpErr, 11, "remote operation error"},
		{rpma.WCRetryExcErr, 12, "transport retry counter exceeded"},
		{rpma.WCRNRRetryExcErr, 13, "RNR retry counter exceeded"},
		{rpma.WCLocRDDViolErr, 14, "local RDD violation error"},
		{rpma.WCRemInvRDReqErr, 15, "remote invalid RD request"},
		{rpma.WCRemAbortErr, 16, "aborted error"},
		{rpma.WCInvEECNErr, 17, "invalid EE context number"},
		{rpma.WCInvEECStateErr, 18, "invalid EE context state"},
		{rpma.WCFatalErr, 19, "fatal error"},
		{rpma.WCRespTimeoutErr, 20, "response timeout error"},
		{rpma.WCGeneralErr, 21, "general error"},
		{rpma.WCTMErr, 22, "TM error"},
		{rpma.WCTMRndvIncomplete, 23, "TM software rendezvous"},
	}
	for _, tt := range want {
		require.Equal(t, tt.value, uint32(tt.status), tt.str)
		require.Equal(t, tt.str, tt.status.String())
	}
	require.Equal(t, "unknown", rpma.WCStatus(24).String())
	require.Equal(t, "unknown", rpma.WCStatus(1<<31).String())
}

func TestWCOpcodeStrings(t *testing.T) {
	// enum ibv_wc_opcode of rdma-core libibverbs/verbs.h.
	want := []struct {
		op    rpma.WCOpcode
		value uint32
		str   string
	}{
		{rpma.WCSend, 0, "IBV_WC_SEND"},
		{rpma.WCRDMAWrite, 1, "IBV_WC_RDMA_WRITE"},
		{rpma.WCRDMARead, 2, "IBV_WC_RDMA_READ"},
		{rpma.WCCompSwap, 3, "IBV_WC_COMP_SWAP"},
		{rpma.WCFetchAdd, 4, "IBV_WC_FETCH_ADD"},
		{rpma.WCBindMW, 5, "IBV_WC_BIND_MW"},
		{rpma.WCLocalInv, 6, "IBV_WC_LOCAL_INV"},
		{rpma.WCTSO, 7, "IBV_WC_TSO"},
		{rpma.WCFlush, 8, "IBV_WC_FLUSH"},
		{rpma.WCAtomicWrite, 9, "IBV_WC_ATOMIC_WRITE"},
		{rpma.WCRecv, 128, "IBV_WC_RECV"},
		{rpma.WCRecvRDMAWithImm, 129, "IBV_WC_RECV_RDMA_WITH_IMM"},
		{rpma.WCTMAdd, 130, "IBV_WC_TM_ADD"},
		{rpma.WCTMDel, 131, "IBV_WC_TM_DEL"},
		{rpma.WCTMSync, 132, "IBV_WC_TM_SYNC"},
		{rpma.WCTMRecv, 133, "IBV_WC_TM_RECV"},
		{rpma.WCTMNoTag, 134, "IBV_WC_TM_NO_TAG"},
		{rpma.WCDriver1, 135, "IBV_WC_DRIVER1"},
		{rpma.WCDriver2, 136, "IBV_WC_DRIVER2"},
		{rpma.WCDriver3, 137, "IBV_WC_DRIVER3"},
	}
	for _, tt := range want {
		require.Equal(t, tt.value, uint32(tt.op), tt.str)
		require.Equal(t, tt.str, tt.op.String())
	}
	require.Equal(t, "WCOpcode(10)", rpma.WCOpcode(10).String())
	require.Equal(t, "WCOpcode(138)", rpma.WCOpcode(138).String())
	require.NotZero(t, rpma.WCRecvRDMAWithImm&rpma.WCRecv, "receive opcodes carry the IBV_WC_RECV bit")
}

func TestWCErrorMessage(t *testing.T) {
	err := &rpma.WCError{Status: rpma.WCRemAccessErr, QPNum: 17, WRID: 5, Opcode: rpma.WCRDMAWrite}
	require.Equal(t, "rpma: work completion failed: remote access error (status 10, vendor error 0x0, qp 17, wr_id 5)", err.Error())

	err = &rpma.WCError{Status: rpma.WCRetryExcErr, VendorErr: 0x81, QPNum: 0xffffffff, WRID: 1<<64 - 1}
	require.Equal(t, "rpma: work completion failed: transport retry counter exceeded (status 12, vendor error 0x81, qp 4294967295, wr_id 18446744073709551615)", err.Error())

	err = &rpma.WCError{Status: 99}
	require.Equal(t, "rpma: work completion failed: unknown (status 99, vendor error 0x0, qp 0, wr_id 0)", err.Error())
}

func TestWCErrorMatching(t *testing.T) {
	remote := fmt.Errorf("read: %w", &rpma.WCError{Status: rpma.WCRemAccessErr, QPNum: 3, WRID: 7})
	flushed := fmt.Errorf("write: %w", &rpma.WCError{Status: rpma.WCWRFlushErr, QPNum: 3, WRID: 8})

	require.ErrorIs(t, remote, rpma.ErrCompletion)
	require.ErrorIs(t, flushed, rpma.ErrCompletion)

	require.ErrorIs(t, flushed, rpma.ErrWRFlushed)
	require.NotErrorIs(t, remote, rpma.ErrWRFlushed)

	// Matching by status ignores the target's other fields.
	require.ErrorIs(t, remote, &rpma.WCError{Status: rpma.WCRemAccessErr})
	require.ErrorIs(t, remote, &rpma.WCError{Status: rpma.WCRemAccessErr, QPNum: 99, WRID: 1})
	require.NotErrorIs(t, remote, &rpma.WCError{Status: rpma.WCRemOpErr})
	require.NotErrorIs(t, flushed, &rpma.WCError{Status: rpma.WCRemAccessErr})
	require.NotErrorIs(t, remote, (*rpma.WCError)(nil))

	// A WCError is not a librpma return code.
	for _, tt := range librpmaCodes {
		require.NotErrorIs(t, remote, tt.sentinel)
	}
	require.NotErrorIs(t, remote, rpma.ErrConnBroken)
	require.NotErrorIs(t, rpma.ErrProvider, rpma.ErrCompletion)
	require.NotErrorIs(t, errors.New("rpma: work completion failed"), rpma.ErrCompletion)

	var wcErr *rpma.WCError
	require.ErrorAs(t, remote, &wcErr)
	require.Equal(t, rpma.WCError{Status: rpma.WCRemAccessErr, QPNum: 3, WRID: 7}, *wcErr)
}
