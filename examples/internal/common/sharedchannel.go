// SPDX-License-Identifier: BSD-3-Clause
// Copyright 2020-2022, Intel Corporation
// Copyright 2026, The gorpma authors
//
// Ported from librpma (https://github.com/pmem/rpma), BSD-3-Clause:
//   examples/common
//   examples/common/common-conn.c
// See LICENSE and NOTICE at the root of github.com/gorpma/rpma.

package common

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/gorpma/rpma/conn"
	"github.com/gorpma/rpma/cq"
	"github.com/gorpma/rpma/rpma"
)

// SharedChannel collects the completions of a connection whose CQ and
// receive CQ share one completion channel (conn.Config.SharedCompChannel),
// as wait_and_validate_completion of librpma's scch examples does with
// rpma_conn_wait and rpma_cq_get_wc. rpma_conn_wait reports whichever CQ
// got the next completion event; completions of another kind that arrive
// before the one asked for are kept until asked for.
type SharedChannel struct {
	// wait is conn.Conn.Wait: it returns the CQ that got an event.
	wait    func(ctx context.Context) (wcPoller, error)
	pending []cq.WC
}

// wcPoller is what SharedChannel uses of a cq.CQ.
type wcPoller interface {
	GetWC(wc []cq.WC) (int, error)
}

// NewSharedChannel returns the completions of c, which must have been
// created with a shared completion channel.
func NewSharedChannel(c *conn.Conn) *SharedChannel {
	return &SharedChannel{wait: func(ctx context.Context) (wcPoller, error) {
		q, _, err := c.Wait(ctx)
		if err != nil {
			return nil, fmt.Errorf("conn.Conn.Wait: %w", err)
		}
		return q, nil
	}}
}

// WaitAndValidate returns the next completion with opcode, waiting for at
// most Timeout. A failed completion met on the way is an error saying
// "<fn> failed: <status>" (fn names the operation, e.g. "rpma_send()").
func (s *SharedChannel) WaitAndValidate(ctx context.Context, opcode rpma.WCOpcode, fn string) (cq.WC, error) {
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	for {
		for i, wc := range s.pending {
			if wc.Status != rpma.WCSuccess {
				return wc, fmt.Errorf("%s failed: %s", fn, wc.Status)
			}
			if wc.Opcode == opcode {
				s.pending = slices.Delete(s.pending, i, i+1)
				return wc, nil
			}
		}
		// wait for the next completion event of either CQ ...
		q, err := s.wait(ctx)
		if err != nil {
			return cq.WC{}, err
		}
		// ... and collect all the completions of the CQ that got it
		var wcs [2]cq.WC
		for {
			n, err := q.GetWC(wcs[:])
			if errors.Is(err, rpma.ErrNoCompletion) {
				break
			}
			if err != nil {
				return cq.WC{}, fmt.Errorf("cq.CQ.GetWC: %w", err)
			}
			s.pending = append(s.pending, wcs[:n]...)
		}
	}
}
