// SPDX-License-Identifier: BSD-3-Clause
// Copyright 2020-2022, Intel Corporation
// Copyright 2026, The gorpma authors
//
// Ported from librpma (https://github.com/pmem/rpma), BSD-3-Clause:
//   examples/common
//   examples/12-receive-completion-queue/receive-completion-queue-common.c
// See LICENSE and NOTICE at the root of github.com/gorpma/rpma.

package common

import (
	"context"
	"errors"
	"fmt"

	"github.com/gorpma/rpma/cq"
	"github.com/gorpma/rpma/rpma"
)

// completionQueue is what the waits here use of a cq.CQ.
type completionQueue interface {
	GetWC(wc []cq.WC) (int, error)
	Wait(ctx context.Context) error
}

// WaitForCompletion waits for the next work completion of q, as
// rpma_cq_wait and rpma_cq_get_wc(cq, 1, ...) do in librpma's examples: it
// polls q and waits for a completion event while there is none, for at
// most Timeout.
func WaitForCompletion(ctx context.Context, q *cq.CQ) (cq.WC, error) {
	return waitForCompletion(ctx, q)
}

func waitForCompletion(ctx context.Context, q completionQueue) (cq.WC, error) {
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	var wc [1]cq.WC
	for {
		_, err := q.GetWC(wc[:])
		if err == nil {
			return wc[0], nil
		}
		if !errors.Is(err, rpma.ErrNoCompletion) {
			return cq.WC{}, fmt.Errorf("cq.CQ.GetWC: %w", err)
		}
		// no completion yet: wait for one
		if err := q.Wait(ctx); err != nil {
			return cq.WC{}, fmt.Errorf("cq.CQ.Wait: %w", err)
		}
	}
}

// The words with which librpma's examples report a completion of an
// unexpected kind (the opcode got, then the one expected).
const (
	// OpcodeMsgDec is the message of 02, 03 and 04.
	OpcodeMsgDec = "unexpected wc.opcode value (%d != %d)"
	// OpcodeMsgHex is the message of 09 and 12 (get_wc_and_validate).
	OpcodeMsgHex = "unexpected wc.opcode value (0x%X != 0x%X)"
)

// ValidateWC checks a work completion as librpma's examples do: it must
// have succeeded, else the error says "<fn> failed: <status>" (fn names the
// operation, e.g. "rpma_read()"), and be of opcode, else the error is
// opcodeMsg (OpcodeMsgDec, OpcodeMsgHex or an example's own) formatted with
// the opcode got and opcode.
func ValidateWC(wc cq.WC, opcode rpma.WCOpcode, fn, opcodeMsg string) error {
	return validateWC(wc, opcode, fn+" failed: %s", opcodeMsg)
}

// ValidateImmWC checks a work completion as examples 10 and 11 do: it must
// have succeeded, else the error says "Received unexpected completion:
// <status>", and be of opcode, else "Received unexpected type of operation
// (<got> != <want>)".
func ValidateImmWC(wc cq.WC, opcode rpma.WCOpcode) error {
	return validateWC(wc, opcode, "Received unexpected completion: %s", "Received unexpected type of operation (%d != %d)")
}

// validateWC checks wc's status (statusMsg formats it) and opcode
// (opcodeMsg formats the one got and the one wanted).
func validateWC(wc cq.WC, opcode rpma.WCOpcode, statusMsg, opcodeMsg string) error {
	if wc.Status != rpma.WCSuccess {
		return fmt.Errorf(statusMsg, wc.Status)
	}
	if wc.Opcode != opcode {
		return fmt.Errorf(opcodeMsg, uint32(wc.Opcode), uint32(opcode))
	}
	return nil
}

// WaitAndValidate mirrors get_wc_and_validate of librpma's
// 12-receive-completion-queue (the other examples write the same steps
// out): it waits for the next completion of q (WaitForCompletion) and
// validates it (ValidateWC).
func WaitAndValidate(ctx context.Context, q *cq.CQ, opcode rpma.WCOpcode, fn, opcodeMsg string) (cq.WC, error) {
	wc, err := WaitForCompletion(ctx, q)
	if err != nil {
		return wc, err
	}
	return wc, ValidateWC(wc, opcode, fn, opcodeMsg)
}

// ReplyDelivered filters the error of a server's wait for the completion
// of its last send: the reply on which its client disconnects as soon as
// it has read it. The client's disconnect can overtake that completion
// (rxe completes the client's receive before it sends the acknowledgement,
// and the client's disconnect can stop that acknowledgement), and where
// librpma's rpma_cq_wait goes on waiting, this library ends the wait on
// the connection's end (doc/api-mapping.md, "waits that end"). In this
// protocol a CLOSED event there means the client had its reply: the
// function returns nil for it and err for anything else. A client that
// failed to read the reply says so itself.
func ReplyDelivered(err error) error {
	var ce *rpma.ConnEventError
	if errors.As(err, &ce) && ce.Event == rpma.ConnClosed && ce.Cause == nil {
		return nil
	}
	return err
}
