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

	"github.com/gorpma/rpma/conn"
	"github.com/gorpma/rpma/rpma"
)

// The two ways librpma's examples end a connection
// (examples/common/common-conn.c): the side that hangs up first disconnects
// and then waits for RPMA_CONN_CLOSED; the other side waits for it, then
// disconnects. An event other than CLOSED is only reported, on stderr, as
// the C helpers do ("rpma_conn_next_event returned an unexpected event:
// <event>"). The C helpers then delete the connection; here the caller
// closes it (a deferred conn.Conn.Close).

// DisconnectAndWaitForClose mirrors common_disconnect_and_wait_for_conn_close:
// this side hangs up.
func DisconnectAndWaitForClose(ctx context.Context, c *conn.Conn) error {
	if err := c.Disconnect(); err != nil {
		return fmt.Errorf("conn.Conn.Disconnect: %w", err)
	}
	return waitForClose(ctx, c)
}

// WaitForCloseAndDisconnect mirrors common_wait_for_conn_close_and_disconnect:
// the other side hangs up.
func WaitForCloseAndDisconnect(ctx context.Context, c *conn.Conn) error {
	err := waitForClose(ctx, c)
	if derr := c.Disconnect(); derr != nil {
		err = errors.Join(err, fmt.Errorf("conn.Conn.Disconnect: %w", derr))
	}
	return err
}

// waitForClose mirrors common_wait_for_conn_close_verbose: it waits for the
// connection's next event and reports one that is not CLOSED on stderr.
func waitForClose(ctx context.Context, c *conn.Conn) error {
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	ev, err := c.NextEvent(ctx)
	if err != nil {
		return fmt.Errorf("conn.Conn.NextEvent: %w", err)
	}
	if ev != rpma.ConnClosed {
		fmt.Fprintln(stderr, UnexpectedEvent(ev))
	}
	return nil
}
