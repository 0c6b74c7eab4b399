// SPDX-License-Identifier: BSD-3-Clause
// Copyright 2020-2022, Intel Corporation
// Copyright 2026, The gorpma authors
//
// Ported from librpma (https://github.com/pmem/rpma), BSD-3-Clause:
//   examples/common
//   examples/common/common-messages-ping-pong.c
// See LICENSE and NOTICE at the root of github.com/gorpma/rpma.

package common

import (
	"context"
	"errors"
	"fmt"

	"github.com/gorpma/rpma/cq"
	"github.com/gorpma/rpma/rpma"
)

// The completions of the messages ping-pong of examples 08, 08srq and 13
// (examples/common/common-messages-ping-pong.c).

// ValidateMessageWC mirrors validate_wc of common-messages-ping-pong.c: a
// failed completion is an error saying "rpma_send() failed: <status>" or
// "rpma_recv() failed: <status>"; a receive must carry recvCtx as its op
// context and exactly MsgSize bytes. It reports whether wc completes the
// send or the receive.
func ValidateMessageWC(wc cq.WC, recvCtx uint64) (send, recv bool, err error) {
	if wc.Status != rpma.WCSuccess {
		fn := "recv"
		if wc.Opcode == rpma.WCSend {
			fn = "send"
		}
		return false, false, fmt.Errorf("rpma_%s() failed: %s", fn, wc.Status)
	}
	switch wc.Opcode {
	case rpma.WCSend:
		return true, false, nil
	case rpma.WCRecv:
		if wc.OpContext != recvCtx || wc.ByteLen != MsgSize {
			return false, false, fmt.Errorf("received completion is not as expected (0x%X != 0x%X [wc.wr_id] || %d != %d [wc.byte_len])",
				wc.OpContext, recvCtx, wc.ByteLen, MsgSize)
		}
		return false, true, nil
	}
	return false, false, nil
}

// WaitAndProcessCompletions mirrors wait_and_process_completions of
// common-messages-ping-pong.c: it collects the completions of q, at most
// MaxNWC at a time, until it has seen the send's (unless sendDone already)
// and one receive's, each validated by ValidateMessageWC. It waits for at
// most Timeout.
func WaitAndProcessCompletions(ctx context.Context, q *cq.CQ, recvCtx uint64, sendDone bool) error {
	return waitAndProcessCompletions(ctx, q, recvCtx, sendDone)
}

func waitAndProcessCompletions(ctx context.Context, q completionQueue, recvCtx uint64, sendDone bool) error {
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	var wcs [MaxNWC]cq.WC
	recvDone := false
	for !sendDone || !recvDone {
		n, err := q.GetWC(wcs[:])
		if errors.Is(err, rpma.ErrNoCompletion) {
			// lack of completions is not an error here: wait for more
			if err := q.Wait(ctx); err != nil {
				return fmt.Errorf("cq.CQ.Wait: %w", err)
			}
			continue
		}
		if err != nil {
			return fmt.Errorf("cq.CQ.GetWC: %w", err)
		}
		for _, wc := range wcs[:n] {
			send, recv, err := ValidateMessageWC(wc, recvCtx)
			if err != nil {
				return err
			}
			sendDone = sendDone || send
			recvDone = recvDone || recv
		}
	}
	return nil
}
