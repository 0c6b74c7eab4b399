package common

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gorpma/rpma/cq"
	"github.com/gorpma/rpma/rpma"
)

// sharedFake is a connection with a shared channel: each wait returns the
// next of its CQs, which holds one batch of completions.
func sharedFake(batches ...[]cq.WC) (*SharedChannel, *int) {
	waits := 0
	return &SharedChannel{wait: func(ctx context.Context) (wcPoller, error) {
		if waits == len(batches) {
			return nil, errors.New("no more events")
		}
		waits++
		return &fakeCQ{batches: [][]cq.WC{batches[waits-1]}}, nil
	}}, &waits
}

func TestSharedChannelInOrder(t *testing.T) {
	send, recv := cq.WC{Opcode: rpma.WCSend}, cq.WC{Opcode: rpma.WCRecv, ByteLen: 8}
	s, waits := sharedFake([]cq.WC{send}, []cq.WC{recv})
	wc, err := s.WaitAndValidate(context.Background(), rpma.WCSend, "rpma_send()")
	require.NoError(t, err)
	require.Equal(t, send, wc)
	wc, err = s.WaitAndValidate(context.Background(), rpma.WCRecv, "rpma_recv()")
	require.NoError(t, err)
	require.Equal(t, recv, wc)
	require.Equal(t, 2, *waits)
}

// The receive's event comes first: it is kept while the send is awaited,
// and returned without another wait.
func TestSharedChannelKeepsTheOtherKind(t *testing.T) {
	send, recv := cq.WC{Opcode: rpma.WCSend}, cq.WC{Opcode: rpma.WCRecv}
	s, waits := sharedFake([]cq.WC{recv}, []cq.WC{send})
	wc, err := s.WaitAndValidate(context.Background(), rpma.WCSend, "rpma_send()")
	require.NoError(t, err)
	require.Equal(t, send, wc)
	require.Equal(t, 2, *waits)
	wc, err = s.WaitAndValidate(context.Background(), rpma.WCRecv, "rpma_recv()")
	require.NoError(t, err)
	require.Equal(t, recv, wc)
	require.Equal(t, 2, *waits, "the receive was kept")
	require.Empty(t, s.pending)
}

// All the completions of one CQ are collected, more than a batch of two.
func TestSharedChannelDrainsTheCQ(t *testing.T) {
	a, b, c := cq.WC{Opcode: rpma.WCSend, OpContext: 1}, cq.WC{Opcode: rpma.WCSend, OpContext: 2}, cq.WC{Opcode: rpma.WCRecv}
	s, waits := sharedFake([]cq.WC{a, b, c})
	wc, err := s.WaitAndValidate(context.Background(), rpma.WCRecv, "rpma_recv()")
	require.NoError(t, err)
	require.Equal(t, c, wc)
	for _, want := range []cq.WC{a, b} {
		wc, err = s.WaitAndValidate(context.Background(), rpma.WCSend, "rpma_send()")
		require.NoError(t, err)
		require.Equal(t, want, wc)
	}
	require.Equal(t, 1, *waits)
}

func TestSharedChannelErrors(t *testing.T) {
	failed := cq.WC{Opcode: rpma.WCRecv, Status: rpma.WCRemAccessErr}
	s, _ := sharedFake([]cq.WC{failed})
	_, err := s.WaitAndValidate(context.Background(), rpma.WCSend, "rpma_send()")
	require.EqualError(t, err, "rpma_send() failed: "+rpma.WCRemAccessErr.String())

	s, _ = sharedFake()
	_, err = s.WaitAndValidate(context.Background(), rpma.WCSend, "rpma_send()")
	require.EqualError(t, err, "no more events")
}
