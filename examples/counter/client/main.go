// Command client is the client of example counter: from <connections>
// connections at once (one goroutine each) it adds 1 to the server's
// counter <adds> times with conn.Conn.FetchAndAdd, and once per
// connection takes the server's lock with conn.Conn.CompareAndSwap
// (0 -> its number), adds 1 to the server's second counter with a plain
// RDMA read and write inside (only the lock makes that safe), and
// releases the lock (its number -> 0).
//
//	client <server_address> <port> <connections> <adds>
//
// Each fetch-and-add returns the counter's old value; over all
// connections the client checks that these are distinct and prints
//
//	connections: C, adds: A, distinct old values: C*A
//	lock taken and released: C times, waited T times
package main

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"sync"

	"github.com/gorpma/rpma/examples/internal/common"
	"github.com/gorpma/rpma/mr"
	"github.com/gorpma/rpma/peer"
	"github.com/gorpma/rpma/rpma"
)

const usage = "usage: %s <server_address> <port> <connections> <adds>\n"

// The server's words, and this client's scratch words in its own region.
const (
	counterOff = 0  // changed by fetch-and-add only
	lockOff    = 8  // changed by compare-and-swap only
	lockedOff  = 16 // changed by reads and writes under the lock only
	oldOff     = 0  // the old value of an atomic
	readOff    = 8  // the locked counter, read
	writeOff   = 16 // the locked counter, to write
)

func main() {
	common.Start(5, usage)
	common.Exit(run(os.Args[1], os.Args[2], int(common.StrtoulArg(3)), int(common.StrtoulArg(4))))
}

func run(addr, port string, connections, adds int) (err error) {
	ctx := context.Background()
	if connections < 1 {
		return errors.New("<connections> must be at least 1")
	}
	p, closePeer, err := common.PeerViaAddress(addr, rpma.IbvContextRemote)
	if err != nil {
		return err
	}
	defer common.CloseWith(&err, "peer", closePeer)

	var (
		mu    sync.Mutex
		seen  = map[uint64]bool{}
		waits int
		errs  []error
		wg    sync.WaitGroup
	)
	for i := range connections {
		wg.Go(func() {
			olds, w, err := worker(ctx, p, addr, port, uint64(i+1), adds)
			mu.Lock()
			defer mu.Unlock()
			waits += w
			for _, v := range olds {
				if seen[v] {
					err = errors.Join(err, fmt.Errorf("old value %d returned twice", v))
				}
				seen[v] = true
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("connection %d: %w", i+1, err))
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	fmt.Printf("connections: %d, adds: %d, distinct old values: %d\n", connections, adds, len(seen))
	fmt.Printf("lock taken and released: %d times, waited %d times\n", connections, waits)
	return nil
}

// worker is one connection: adds fetch-and-adds, then one critical
// section under the lock, as client id. It returns the old values of its
// fetch-and-adds and how often the lock was found taken.
func worker(ctx context.Context, p *peer.Peer, addr, port string, id uint64, adds int) (olds []uint64, waits int, err error) {
	// the old values land here: the device writes them, as it writes a
	// read's destination
	local, closeMR, err := common.RegDRAM(p, 4096, mr.UsageReadDst|mr.UsageWriteSrc)
	if err != nil {
		return nil, 0, err
	}
	defer common.CloseWith(&err, "memory region", closeMR)
	b := local.Bytes()
	word := func(off int) uint64 { return binary.NativeEndian.Uint64(b[off:]) }

	c, err := common.ClientConnect(ctx, p, addr, port, nil, nil)
	if err != nil {
		return nil, 0, err
	}
	defer common.CloseWith(&err, "conn.Conn.Close", c.Close)
	// the server's words, from the extended descriptor in its private data
	shared, err := mr.RemoteFromExtendedDescriptor(c.PrivateData())
	if err != nil {
		return nil, 0, fmt.Errorf("mr.RemoteFromExtendedDescriptor: %w", err)
	}
	// each step waits for its completion: only then is the old value there
	step := func(post error, opcode rpma.WCOpcode, fn string) error {
		if post != nil {
			return fmt.Errorf("%s: %w", fn, post)
		}
		_, err := common.WaitAndValidate(ctx, c.CQ(), opcode, fn, common.OpcodeMsgHex)
		return err
	}

	for range adds {
		if err := step(c.FetchAndAdd(shared, counterOff, local, oldOff, 1, rpma.CompletionAlways, 0), rpma.WCFetchAdd, "conn.Conn.FetchAndAdd"); err != nil {
			return olds, waits, err
		}
		olds = append(olds, word(oldOff))
	}

	// take the lock: swap 0 for id until the old value is 0
	for {
		if err := step(c.CompareAndSwap(shared, lockOff, local, oldOff, 0, id, rpma.CompletionAlways, 0), rpma.WCCompSwap, "conn.Conn.CompareAndSwap"); err != nil {
			return olds, waits, err
		}
		if word(oldOff) == 0 {
			break
		}
		waits++
	}
	// inside: read, add, write back
	if err := step(c.Read(local, readOff, shared, lockedOff, 8, rpma.CompletionAlways, 0), rpma.WCRDMARead, "conn.Conn.Read"); err != nil {
		return olds, waits, err
	}
	binary.NativeEndian.PutUint64(b[writeOff:], word(readOff)+1)
	if err := step(c.Write(shared, lockedOff, local, writeOff, 8, rpma.CompletionAlways, 0), rpma.WCRDMAWrite, "conn.Conn.Write"); err != nil {
		return olds, waits, err
	}
	// release: swap id for 0; the old value must be id
	if err := step(c.CompareAndSwap(shared, lockOff, local, oldOff, id, 0, rpma.CompletionAlways, 0), rpma.WCCompSwap, "conn.Conn.CompareAndSwap"); err != nil {
		return olds, waits, err
	}
	if got := word(oldOff); got != id {
		return olds, waits, fmt.Errorf("the lock held %d when its owner %d released it", got, id)
	}
	return olds, waits, common.DisconnectAndWaitForClose(ctx, c)
}
