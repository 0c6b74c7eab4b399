// SPDX-License-Identifier: BSD-3-Clause
// Copyright 2020-2022, Intel Corporation
// Copyright 2026, The gorpma authors
//
// Ported from librpma (https://github.com/pmem/rpma), BSD-3-Clause:
//   examples/common
// See LICENSE and NOTICE at the root of github.com/gorpma/rpma.

package common

import (
	"errors"

	"github.com/gorpma/rpma/mr"
	"github.com/gorpma/rpma/peer"
)

// MessageBuffers are the receive and the send buffer of the messages
// ping-pong examples (08, 08srq, 12, 12scch, 13): separate DRAM buffers
// registered for receiving (RPMA_MR_USAGE_RECV) and for sending
// (RPMA_MR_USAGE_SEND) respectively (RegDRAM).
type MessageBuffers struct {
	// Recv and Send are the buffers.
	Recv, Send []byte
	// RecvMR and SendMR are their registrations.
	RecvMR, SendMR *mr.Local
	// RecvCtx is the op context the C examples give their receives: the
	// receive buffer's address.
	RecvCtx uint64

	closeRecv, closeSend func() error
}

// NewMessageBuffers allocates the two buffers, size bytes each (MsgSize,
// or a slot of MsgSize per client), and registers them with p.
func NewMessageBuffers(p *peer.Peer, size int) (*MessageBuffers, error) {
	b := &MessageBuffers{}
	var err error
	if b.RecvMR, b.closeRecv, err = RegDRAM(p, size, mr.UsageRecv); err != nil {
		return nil, err
	}
	if b.SendMR, b.closeSend, err = RegDRAM(p, size, mr.UsageSend); err != nil {
		return nil, errors.Join(err, b.closeRecv())
	}
	b.Recv, b.Send = b.RecvMR.Bytes(), b.SendMR.Bytes()
	b.RecvCtx = b.RecvMR.Addr()
	return b, nil
}

// Close deregisters the buffers and frees them; they must not be in use.
func (b *MessageBuffers) Close() error {
	return errors.Join(b.closeSend(), b.closeRecv())
}

// PutCounter writes the message v, a counter (EncodeCounter), into the
// send buffer at off, for the next send from there.
func (b *MessageBuffers) PutCounter(off int, v uint64) {
	m := EncodeCounter(v)
	copy(b.Send[off:off+MsgSize], m[:])
}

// Counter reads the counter a receive at off of the receive buffer got
// (DecodeCounter).
func (b *MessageBuffers) Counter(off int) (uint64, error) {
	return DecodeCounter(b.Recv[off : off+MsgSize])
}
