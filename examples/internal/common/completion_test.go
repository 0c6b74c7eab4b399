package common

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gorpma/rpma/cq"
	"github.com/gorpma/rpma/rpma"
)

// fakeCQ hands out its completions in batches: each GetWC returns the next
// batch (an empty one is rpma.ErrNoCompletion); Wait counts the waits.
type fakeCQ struct {
	batches [][]cq.WC
	waits   int
	waitErr error
	getErr  error
}

func (q *fakeCQ) GetWC(wc []cq.WC) (int, error) {
	if q.getErr != nil {
		return 0, q.getErr
	}
	if len(q.batches) == 0 || len(q.batches[0]) == 0 {
		if len(q.batches) > 0 {
			q.batches = q.batches[1:]
		}
		return 0, rpma.ErrNoCompletion
	}
	b := q.batches[0]
	n := copy(wc, b)
	if n == len(b) {
		q.batches = q.batches[1:]
	} else {
		q.batches[0] = b[n:]
	}
	return n, nil
}

func (q *fakeCQ) Wait(ctx context.Context) error {
	q.waits++
	if q.waitErr != nil {
		return q.waitErr
	}
	if len(q.batches) == 0 {
		return errors.New("fakeCQ: waiting forever")
	}
	return nil
}

func TestWaitForCompletion(t *testing.T) {
	read := cq.WC{Opcode: rpma.WCRDMARead, OpContext: 7}
	// none at first: one wait, then the completion
	q := &fakeCQ{batches: [][]cq.WC{{}, {read}}}
	wc, err := waitForCompletion(context.Background(), q)
	require.NoError(t, err)
	require.Equal(t, read, wc)
	require.Equal(t, 1, q.waits)

	// already there: no wait
	q = &fakeCQ{batches: [][]cq.WC{{read}}}
	_, err = waitForCompletion(context.Background(), q)
	require.NoError(t, err)
	require.Zero(t, q.waits)

	broken := errors.New("broken")
	q = &fakeCQ{waitErr: broken}
	_, err = waitForCompletion(context.Background(), q)
	require.ErrorIs(t, err, broken)
	require.ErrorContains(t, err, "cq.CQ.Wait")

	q = &fakeCQ{getErr: broken}
	_, err = waitForCompletion(context.Background(), q)
	require.ErrorIs(t, err, broken)
	require.ErrorContains(t, err, "cq.CQ.GetWC")
}

func TestValidateWC(t *testing.T) {
	ok := cq.WC{Opcode: rpma.WCRDMARead}
	require.NoError(t, ValidateWC(ok, rpma.WCRDMARead, "rpma_read()", OpcodeMsgDec))

	failed := cq.WC{Opcode: rpma.WCRDMARead, Status: rpma.WCRemAccessErr}
	require.EqualError(t, ValidateWC(failed, rpma.WCRDMARead, "rpma_read()", OpcodeMsgDec),
		"rpma_read() failed: "+rpma.WCRemAccessErr.String())

	other := cq.WC{Opcode: rpma.WCRecv}
	require.EqualError(t, ValidateWC(other, rpma.WCSend, "rpma_send()", OpcodeMsgDec),
		"unexpected wc.opcode value (128 != 0)")
	require.EqualError(t, ValidateWC(other, rpma.WCSend, "rpma_send()", OpcodeMsgHex),
		"unexpected wc.opcode value (0x80 != 0x0)")

	require.NoError(t, ValidateImmWC(cq.WC{Opcode: rpma.WCSend}, rpma.WCSend))
	require.EqualError(t, ValidateImmWC(failed, rpma.WCSend),
		"Received unexpected completion: "+rpma.WCRemAccessErr.String())
	require.EqualError(t, ValidateImmWC(other, rpma.WCSend),
		"Received unexpected type of operation (128 != 0)")
}

// TestReplyDelivered: only the client's plain disconnect counts as a
// delivered reply; a loss, a cause or any other failure stays an error.
func TestReplyDelivered(t *testing.T) {
	closed := fmt.Errorf("cq.CQ.Wait: %w", &rpma.ConnEventError{Event: rpma.ConnClosed})
	require.NoError(t, ReplyDelivered(nil))
	require.NoError(t, ReplyDelivered(closed))
	for _, err := range []error{
		&rpma.ConnEventError{Event: rpma.ConnLost},
		&rpma.ConnEventError{Event: rpma.ConnClosed, Cause: errors.New("device fatal")},
		errors.New("rpma_send() failed: transport retry counter exceeded"),
		context.DeadlineExceeded,
	} {
		require.ErrorIs(t, ReplyDelivered(err), err)
	}
}
