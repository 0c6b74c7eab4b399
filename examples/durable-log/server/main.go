// Command server is the server of example durable-log, which librpma does
// not have: it offers a log region to one client, whose goroutines append
// records to it over one connection, each durable before its call
// returns (conn.Conn.WriteAndFlushWait), and prints how many whole
// records the log holds once the client has hung up.
//
//	server <server_address> <port> [<pmem-path>]
//
// With <pmem-path> (a Device DAX such as /dev/dax0.0, or a file on an
// FsDAX mount) the log is in persistent memory and the server declares
// direct write to it (peer.Cfg.DirectWriteToPMem), so the client's
// flushes are persistent; without it, the log is in DRAM, nothing is
// declared, and the client's flushes only make the records visible.
// It prints
//
//	log holds N records
package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/gorpma/rpma/examples/durable-log/record"
	"github.com/gorpma/rpma/mr"
	"github.com/gorpma/rpma/peer"
	"github.com/gorpma/rpma/pmem"
	"github.com/gorpma/rpma/rpma"
	"github.com/gorpma/rpma/session"
)

func main() {
	if len(os.Args) != 3 && len(os.Args) != 4 {
		fmt.Fprintf(os.Stderr, "usage: %s <server_address> <port> [<pmem-path>]\n", os.Args[0])
		os.Exit(2)
	}
	path := ""
	if len(os.Args) == 4 {
		path = os.Args[3]
	}
	if err := serve(os.Args[1], os.Args[2], path); err != nil {
		log.Fatal(err)
	}
}

func serve(addr, port, path string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dev, err := peer.DeviceForAddress(addr, rpma.IbvContextLocal)
	if err != nil {
		return err
	}
	defer dev.Close()
	p, err := peer.New(dev)
	if err != nil {
		return err
	}
	defer p.Close()

	var r *pmem.Region
	if path != "" {
		r, err = pmem.Map(path, 0)
	} else {
		r, err = pmem.Alloc(record.LogSize)
	}
	if err != nil {
		return err
	}
	defer r.Close()
	if r.Len() < record.LogSize {
		return fmt.Errorf("%s: %d bytes, the log needs %d", path, r.Len(), record.LogSize)
	}
	logMem := r.Bytes()[:record.LogSize]
	clear(logMem)
	if err := r.Persist(0, record.LogSize); err != nil {
		return err
	}
	m, err := mr.Reg(p, logMem, mr.UsageWriteDst|mr.UsageReadSrc|mr.UsageFlushPersistent|mr.UsageFlushVisibility)
	if err != nil {
		return err
	}
	defer m.Dereg()

	c, err := session.Serve(ctx, p, addr, port, m, peer.Cfg{DirectWriteToPMem: r.Kind().IsPMem()})
	if err != nil {
		return err
	}
	defer c.Close()
	if err := session.WaitForHangup(ctx, c); err != nil {
		return err
	}
	fmt.Printf("log holds %d records\n", record.Count(logMem))
	return nil
}
