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
	"errors"
	"fmt"

	"github.com/gorpma/rpma/ep"
	"github.com/gorpma/rpma/peer"
	"github.com/gorpma/rpma/rpma"
)

// PeerViaAddress mirrors common_peer_via_address of librpma's
// examples/common/common-conn.c: the RDMA device addr binds to
// (rpma.IbvContextLocal, servers) or routes through (rpma.IbvContextRemote,
// clients), and a new peer on it. close closes the peer, then the device:
//
//	p, closePeer, err := common.PeerViaAddress(addr, rpma.IbvContextRemote)
//	if err != nil {
//		return err
//	}
//	defer common.CloseWith(&err, "peer", closePeer)
func PeerViaAddress(addr string, typ rpma.UtilIbvContextType) (p *peer.Peer, close func() error, err error) {
	dev, err := peer.DeviceForAddress(addr, typ)
	if err != nil {
		return nil, nil, fmt.Errorf("peer.DeviceForAddress: %w", err)
	}
	if p, err = peer.New(dev); err != nil {
		return nil, nil, errors.Join(fmt.Errorf("peer.New: %w", err), dev.Close())
	}
	return p, closeAll(closer{"peer.Peer.Close", p.Close}, closer{"peer.Device.Close", dev.Close}), nil
}

// Listen begins every example server: a peer on the device addr binds to
// (PeerViaAddress with rpma.IbvContextLocal) and an endpoint listening at
// addr:port (rpma_ep_listen). close shuts the endpoint down, then closes
// the peer:
//
//	p, e, closeEP, err := common.Listen(addr, port)
//	if err != nil {
//		return err
//	}
//	defer common.CloseWith(&err, "endpoint", closeEP)
func Listen(addr, port string) (p *peer.Peer, e *ep.Endpoint, close func() error, err error) {
	p, closePeer, err := PeerViaAddress(addr, rpma.IbvContextLocal)
	if err != nil {
		return nil, nil, nil, err
	}
	if e, err = ep.Listen(p, addr, port); err != nil {
		return nil, nil, nil, errors.Join(fmt.Errorf("ep.Listen: %w", err), closePeer())
	}
	return p, e, closeAll(closer{"ep.Endpoint.Shutdown", e.Shutdown}, closer{"peer", closePeer}), nil
}
