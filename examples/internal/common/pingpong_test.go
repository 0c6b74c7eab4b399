package common

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gorpma/rpma/cq"
	"github.com/gorpma/rpma/rpma"
)

const testRecvCtx = 0x7f0000001000

func TestValidateMessageWC(t *testing.T) {
	send, recv, err := ValidateMessageWC(cq.WC{Opcode: rpma.WCSend}, testRecvCtx)
	require.NoError(t, err)
	require.True(t, send)
	require.False(t, recv)

	send, recv, err = ValidateMessageWC(cq.WC{Opcode: rpma.WCRecv, OpContext: testRecvCtx, ByteLen: MsgSize}, testRecvCtx)
	require.NoError(t, err)
	require.False(t, send)
	require.True(t, recv)

	_, _, err = ValidateMessageWC(cq.WC{Opcode: rpma.WCRecv, OpContext: 1, ByteLen: MsgSize}, testRecvCtx)
	require.EqualError(t, err, "received completion is not as expected (0x1 != 0x7F0000001000 [wc.wr_id] || 8 != 8 [wc.byte_len])")
	_, _, err = ValidateMessageWC(cq.WC{Opcode: rpma.WCRecv, OpContext: testRecvCtx, ByteLen: 9}, testRecvCtx)
	require.EqualError(t, err, "received completion is not as expected (0x7F0000001000 != 0x7F0000001000 [wc.wr_id] || 9 != 8 [wc.byte_len])")

	// a failed completion names its operation
	_, _, err = ValidateMessageWC(cq.WC{Opcode: rpma.WCSend, Status: rpma.WCRemAccessErr}, testRecvCtx)
	require.EqualError(t, err, "rpma_send() failed: "+rpma.WCRemAccessErr.String())
	_, _, err = ValidateMessageWC(cq.WC{Opcode: rpma.WCRecv, Status: rpma.WCRemAccessErr}, testRecvCtx)
	require.ErrorContains(t, err, "rpma_recv() failed: ")

	// other completions are neither
	send, recv, err = ValidateMessageWC(cq.WC{Opcode: rpma.WCRDMAWrite}, testRecvCtx)
	require.NoError(t, err)
	require.False(t, send || recv)
}

func TestWaitAndProcessCompletions(t *testing.T) {
	send := cq.WC{Opcode: rpma.WCSend}
	recv := cq.WC{Opcode: rpma.WCRecv, OpContext: testRecvCtx, ByteLen: MsgSize}

	// both at once
	q := &fakeCQ{batches: [][]cq.WC{{recv, send}}}
	require.NoError(t, waitAndProcessCompletions(context.Background(), q, testRecvCtx, false))
	require.Zero(t, q.waits)

	// one after the other, with waits in between
	q = &fakeCQ{batches: [][]cq.WC{{}, {send}, {}, {recv}}}
	require.NoError(t, waitAndProcessCompletions(context.Background(), q, testRecvCtx, false))
	require.Equal(t, 2, q.waits)

	// the send already seen: the receive is enough
	q = &fakeCQ{batches: [][]cq.WC{{recv}}}
	require.NoError(t, waitAndProcessCompletions(context.Background(), q, testRecvCtx, true))

	// a bad receive ends it
	q = &fakeCQ{batches: [][]cq.WC{{send, {Opcode: rpma.WCRecv, OpContext: testRecvCtx, ByteLen: 4}}}}
	require.ErrorContains(t, waitAndProcessCompletions(context.Background(), q, testRecvCtx, false), "4 != 8 [wc.byte_len]")

	// the receive alone is not enough
	q = &fakeCQ{batches: [][]cq.WC{{recv}}}
	require.ErrorContains(t, waitAndProcessCompletions(context.Background(), q, testRecvCtx, false), "waiting forever")
}
