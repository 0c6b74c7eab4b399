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
	"fmt"
	"time"

	"github.com/gorpma/rpma/conn"
	"github.com/gorpma/rpma/ep"
	"github.com/gorpma/rpma/peer"
	"github.com/gorpma/rpma/rpma"
)

// Timeout bounds each wait of the helpers here (librpma's examples wait
// forever): a helper gives up after Timeout, or earlier when its context
// ends. A program may bound its whole run with it too.
const Timeout = 60 * time.Second

// ClientConnect mirrors client_connect of librpma's
// examples/common/common-conn.c: a connection request to addr:port with
// cfg (nil: the defaults), connected with pdata as private data, which must
// then get established (Establish).
func ClientConnect(ctx context.Context, p *peer.Peer, addr, port string, cfg *conn.Config, pdata []byte) (*conn.Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	req, err := conn.NewRequest(ctx, p, addr, port, cfg)
	if err != nil {
		return nil, fmt.Errorf("conn.NewRequest: %w", err)
	}
	return Establish(ctx, req, pdata)
}

// ServerAccept mirrors server_accept_connection of librpma's
// examples/common/common-conn.c: the endpoint's next connection request
// (with cfg, nil: the defaults), accepted with pdata as private data, which
// must then get established (Establish).
func ServerAccept(ctx context.Context, e *ep.Endpoint, cfg *conn.Config, pdata []byte) (*conn.Conn, error) {
	return ServerAcceptPrepared(ctx, e, cfg, pdata, nil)
}

// ServerAcceptPrepared is ServerAccept for the servers that must do
// something with the request before they accept it: post the receive for
// the client's first message (rpma_conn_req_recv), since a client may send
// as soon as the connection is established. prepare (if not nil) gets the
// request first; its error rejects the request and is returned.
//
//	c, err := common.ServerAcceptPrepared(ctx, e, cfg, nil, func(req *conn.ConnReq) error {
//		return req.Recv(recvMR, 0, common.MsgSize, recvCtx)
//	})
func ServerAcceptPrepared(ctx context.Context, e *ep.Endpoint, cfg *conn.Config, pdata []byte,
	prepare func(req *conn.ConnReq) error) (*conn.Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	req, err := e.NextConnReq(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("ep.Endpoint.NextConnReq: %w", err)
	}
	if prepare != nil {
		if err := prepare(req); err != nil {
			req.Close()
			return nil, fmt.Errorf("preparing the connection request: %w", err)
		}
	}
	return Establish(ctx, req, pdata)
}

// Establish connects (client) or accepts (server) req with pdata as
// private data and waits for the connection's first event, which must be
// RPMA_CONN_ESTABLISHED; any other is an error saying, as librpma's
// examples do, "rpma_conn_next_event returned an unexpected event: <event>".
// req is consumed either way; on an error the connection is closed.
func Establish(ctx context.Context, req *conn.ConnReq, pdata []byte) (*conn.Conn, error) {
	c, err := req.Connect(pdata)
	if err != nil {
		req.Close()
		return nil, fmt.Errorf("conn.ConnReq.Connect: %w", err)
	}
	if err := ExpectEvent(ctx, c, rpma.ConnEstablished); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// ExpectEvent waits for the connection's next event, which must be want:
// any other is an error saying "rpma_conn_next_event returned an unexpected
// event: <event>".
func ExpectEvent(ctx context.Context, c *conn.Conn, want rpma.ConnEvent) error {
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	ev, err := c.NextEvent(ctx)
	if err != nil {
		return fmt.Errorf("conn.Conn.NextEvent: %w", err)
	}
	if ev != want {
		return UnexpectedEvent(ev)
	}
	return nil
}

// UnexpectedEvent is the error, or the message, with which librpma's
// examples report a connection event they did not expect.
func UnexpectedEvent(ev rpma.ConnEvent) error {
	return fmt.Errorf("rpma_conn_next_event returned an unexpected event: %s", ev)
}
