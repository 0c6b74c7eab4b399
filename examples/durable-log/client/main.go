// Command client is the client of example durable-log: G goroutines
// append records to the server's log over ONE connection, each record
// durable before its append returns, then read every acknowledged record
// back.
//
//	client <server_address> <port> <goroutines> <records-per-goroutine>
//
// Each append takes the next slot of the log (an atomic counter: the
// client is the log's only writer), builds the record in its slot of a
// registered staging region and calls conn.Conn.WriteAndFlushWait: one
// write and one flush posted as a chain, and the call returns when that
// flush has completed, whatever the other goroutines post meanwhile. The
// flush is persistent when the server declared direct write to
// persistent memory, else (a DRAM log) it only makes the record visible.
// A full send queue makes an append wait for room; nothing is retried by
// hand. Then every acknowledged record is read back (conn.Conn.ReadWait,
// from as many goroutines) and compared. It prints
//
//	flush: persistent
//	DURABLE-LOG goroutines=G appended=N missing=0
package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorpma/rpma/conn"
	"github.com/gorpma/rpma/examples/durable-log/record"
	"github.com/gorpma/rpma/mr"
	"github.com/gorpma/rpma/peer"
	"github.com/gorpma/rpma/pmem"
	"github.com/gorpma/rpma/rpma"
	"github.com/gorpma/rpma/session"
)

func main() {
	if len(os.Args) != 5 {
		fmt.Fprintf(os.Stderr, "usage: %s <server_address> <port> <goroutines> <records-per-goroutine>\n", os.Args[0])
		os.Exit(2)
	}
	g, err1 := strconv.Atoi(os.Args[3])
	n, err2 := strconv.Atoi(os.Args[4])
	if err := errors.Join(err1, err2); err != nil || g < 1 || n < 1 || g*n > record.Slots {
		fmt.Fprintf(os.Stderr, "%s: <goroutines> and <records-per-goroutine> must be at least 1, their product at most %d\n", os.Args[0], record.Slots)
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Args[2], g, n); err != nil {
		log.Fatal(err)
	}
}

func run(addr, port string, goroutines, perGoroutine int) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dev, err := peer.DeviceForAddress(addr, rpma.IbvContextRemote)
	if err != nil {
		return err
	}
	defer dev.Close()
	p, err := peer.New(dev)
	if err != nil {
		return err
	}
	defer p.Close()

	// The staging region (each slot's record is built at the slot's
	// offset, so no two appends share bytes) and the read-back region.
	staging, err := pmem.Alloc(record.LogSize)
	if err != nil {
		return err
	}
	defer staging.Close()
	src, err := mr.Reg(p, staging.Bytes(), mr.UsageWriteSrc)
	if err != nil {
		return err
	}
	defer src.Dereg()
	readBack, err := pmem.Alloc(record.LogSize)
	if err != nil {
		return err
	}
	defer readBack.Close()
	back, err := mr.Reg(p, readBack.Bytes(), mr.UsageReadDst)
	if err != nil {
		return err
	}
	defer back.Dereg()

	c, dst, err := session.Connect(ctx, p, addr, port, nil)
	if err != nil {
		return err
	}
	defer c.Close()
	if dst == nil || dst.Size() < record.LogSize {
		return errors.New("the server offered no log region, or a short one")
	}
	// Persistent when the server declared direct write to persistent
	// memory in its offer (session.Connect applied it) and the region
	// allows it.
	var offer session.Offer
	if err := offer.UnmarshalBinary(c.PrivateData()); err != nil {
		return err
	}
	pcfg, err := offer.PeerCfg()
	if err != nil {
		return err
	}
	typ := rpma.FlushVisibility
	if pcfg.DirectWriteToPMem && dst.FlushUsage()&mr.UsageFlushPersistent != 0 {
		typ = rpma.FlushPersistent
	}

	appended, err := appendAll(ctx, c, dst, src, staging.Bytes(), goroutines, perGoroutine, typ)
	if err != nil {
		return err
	}
	missing, err := readAll(ctx, c, dst, back, readBack.Bytes(), staging.Bytes(), appended, goroutines)
	if err != nil {
		return err
	}
	if typ == rpma.FlushPersistent {
		fmt.Println("flush: persistent")
	} else {
		fmt.Println("flush: visibility")
	}
	fmt.Printf("DURABLE-LOG goroutines=%d appended=%d missing=%d\n", goroutines, appended, missing)
	return session.Hangup(ctx, c)
}

// appendAll runs the appending goroutines and returns how many records
// were acknowledged.
func appendAll(ctx context.Context, c *conn.Conn, dst *mr.Remote, src *mr.Local, staging []byte, goroutines, perGoroutine int, typ rpma.FlushType) (int, error) {
	var (
		next  atomic.Int64
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	for g := range goroutines {
		wg.Go(func() {
			for i := range perGoroutine {
				slot := int(next.Add(1) - 1)
				off := slot * record.Size
				record.Encode(staging[off:off+record.Size], slot, g, i)
				if err := c.WriteAndFlushWait(ctx, dst, off, src, off, record.Size, typ); err != nil {
					mu.Lock()
					first = errors.Join(first, fmt.Errorf("goroutine %d, record %d: %w", g, i, err))
					mu.Unlock()
					return
				}
			}
		})
	}
	wg.Wait()
	return int(next.Load()), first
}

// readAll reads the first n records back and returns how many differ
// from what was appended.
func readAll(ctx context.Context, c *conn.Conn, dst *mr.Remote, back *mr.Local, backMem, staging []byte, n, goroutines int) (int, error) {
	var (
		missing atomic.Int64
		wg      sync.WaitGroup
		errs    = make([]error, goroutines)
	)
	for g := range goroutines {
		wg.Go(func() {
			for slot := g; slot < n; slot += goroutines {
				off := slot * record.Size
				if err := c.ReadWait(ctx, back, off, dst, off, record.Size); err != nil {
					errs[g] = err
					return
				}
				if !bytes.Equal(backMem[off:off+record.Size], staging[off:off+record.Size]) || !record.Valid(backMem[off:off+record.Size]) {
					missing.Add(1)
				}
			}
		})
	}
	wg.Wait()
	return int(missing.Load()), errors.Join(errs...)
}
