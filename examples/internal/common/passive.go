// SPDX-License-Identifier: BSD-3-Clause
// Copyright 2020-2022, Intel Corporation
// Copyright 2026, The gorpma authors
//
// Ported from librpma (https://github.com/pmem/rpma), BSD-3-Clause:
//   examples/common
// See LICENSE and NOTICE at the root of github.com/gorpma/rpma.

package common

import (
	"context"
	"errors"
	"fmt"

	"github.com/gorpma/rpma/conn"
	"github.com/gorpma/rpma/ep"
	"github.com/gorpma/rpma/peer"
)

// AcceptAndWaitForClose is all the connection of a server whose client
// does everything with one-sided operations (the RDMA reads, writes and
// flushes of 02, 04, 05 and 07): ServerAccept with pdata (the server's
// memory region for the client, default configuration), then
// WaitForCloseAndDisconnect: the client hangs up when it is done. The
// connection is closed before it returns.
func AcceptAndWaitForClose(ctx context.Context, e *ep.Endpoint, pdata []byte) error {
	c, err := ServerAccept(ctx, e, nil, pdata)
	if err != nil {
		return err
	}
	return closeConn(c, WaitForCloseAndDisconnect(ctx, c))
}

// ConnectAndWaitForClose is the mirror image for the clients whose server
// does everything with one-sided operations (the RDMA reads of 03 and 06):
// ClientConnect with pdata (the client's memory region for the server,
// default configuration), then WaitForCloseAndDisconnect: the server hangs
// up when it is done. The connection is closed before it returns.
func ConnectAndWaitForClose(ctx context.Context, p *peer.Peer, addr, port string, pdata []byte) error {
	c, err := ClientConnect(ctx, p, addr, port, nil, pdata)
	if err != nil {
		return err
	}
	return closeConn(c, WaitForCloseAndDisconnect(ctx, c))
}

// closeConn closes c and adds its error, if any, to err.
func closeConn(c *conn.Conn, err error) error {
	if cerr := c.Close(); cerr != nil {
		err = errors.Join(err, fmt.Errorf("conn.Conn.Close: %w", cerr))
	}
	return err
}
