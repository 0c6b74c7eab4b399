// Command server is the server of example counter, which librpma does not
// have: a remote counter and a lock word, changed only by its clients'
// remote atomics (conn.Conn.FetchAndAdd and CompareAndSwap).
//
//	server <server_address> <port> <connections>
//
// It registers one 4 KiB DRAM region whose first word is a counter (the
// clients change it with fetch-and-add only), whose second is a lock
// (compare-and-swap only) and whose third a counter the clients change
// with plain reads and writes while they hold the lock, for remote atomics
// (mr.UsageAtomicDst), reads and writes, and hands each client the region's extended descriptor
// (mr.Local.ExtendedDescriptor, 22 bytes: librpma's 21-byte descriptor
// has no room for the atomic usage) in the accept private data. It
// accepts <connections> connections, waits until each has hung up, and
// prints the counter and the lock:
//
//	counter: N
//	locked counter: M
//	lock: 0
//
// Remote atomics are atomic only against each other (rxe, like most
// devices, reports IBV_ATOMIC_HCA): a word changed by atomics must not be
// written by RDMA writes, AtomicWrite or the server's CPU at the same
// time, which is why each word here has one kind of access.
package main

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"

	"github.com/gorpma/rpma/conn"
	"github.com/gorpma/rpma/examples/internal/common"
	"github.com/gorpma/rpma/mr"
)

const usage = "usage: %s <server_address> <port> <connections>\n"

func main() {
	common.Start(4, usage)
	common.Exit(run(os.Args[1], os.Args[2], int(common.StrtoulArg(3))))
}

func run(addr, port string, connections int) (err error) {
	ctx := context.Background() // the helpers bound every wait by common.Timeout
	if connections < 1 {
		return errors.New("<connections> must be at least 1")
	}
	p, e, closeEP, err := common.Listen(addr, port)
	if err != nil {
		return err
	}
	defer common.CloseWith(&err, "endpoint", closeEP)

	// the counter (word 0), the lock (word 1) and the locked counter
	// (word 2), zeroed by pmem.Alloc
	words, closeMR, err := common.RegDRAM(p, 4096, mr.UsageAtomicDst|mr.UsageReadSrc|mr.UsageWriteDst)
	if err != nil {
		return err
	}
	defer common.CloseWith(&err, "memory region", closeMR)
	desc := words.ExtendedDescriptor()

	// accept every client first, so that their atomics run at once
	conns := make([]*conn.Conn, 0, connections)
	defer func() {
		for _, c := range conns {
			err = errors.Join(err, c.Close())
		}
	}()
	for range connections {
		c, err := common.ServerAccept(ctx, e, nil, desc[:])
		if err != nil {
			return err
		}
		conns = append(conns, c)
	}
	// each client hangs up when it is done
	for _, c := range conns {
		if err := common.WaitForCloseAndDisconnect(ctx, c); err != nil {
			return err
		}
	}
	b := words.Bytes()
	fmt.Printf("counter: %d\n", binary.NativeEndian.Uint64(b[0:]))
	fmt.Printf("locked counter: %d\n", binary.NativeEndian.Uint64(b[16:]))
	fmt.Printf("lock: %d\n", binary.NativeEndian.Uint64(b[8:]))
	return nil
}
