// Command plnode is the program the power-loss test's VMs run.
//
//	plnode server -rounds R -per-round N [-gpspm [-skip-persist]] [-delay-read-responses D]
//	plnode client -mode MODE -peer ADDR -rounds R -per-round N [-ack-to-server] [-exit-when-done]
//
// The server maps the VM's NVDIMM ($RPMA_TEST_PMEM, Device DAX), first
// prints which records of earlier rounds it finds there ("HAVE round
// ranges", "-" for none), registers the memory for remote writes and
// persistent flushes, declares direct write to pmem, prints "READY" and
// serves one connection: the MR and peer-cfg descriptors go in its private
// data. The client connects (retrying while no server listens), prints
// "ROUND r", then writes numbered records, each followed by a persistent
// flush, and prints "ACK r seq" when a record counts as acknowledged: when
// its flush completes (ack-on-flush), or when it was posted (ack-on-post,
// the negative control), when its write completed with no flush posted
// (ack-on-write), or when its write completed with the flush posted but
// not completed (ack-on-write-flushed). When the connection breaks (the
// server lost power) it goes on with the next round.
//
// With -mode gpspm the client writes each record and asks the server to
// persist it (gpspm.go); the server needs -gpspm.
//
// The wire check: with -ack-to-server the client also writes each
// acknowledgement (powerloss.Record.PutAck) to a word after the server's
// counters, so that a capture of the wire shows it; with -exit-when-done
// it stops after a round's DONE (once its acknowledgements completed)
// instead of probing until the server dies. The server's
// -delay-read-responses D holds its RDMA READ responses (the emulated
// flush's) for D at its egress (tc prio, netem, u32 on the BTH opcode),
// so that an acknowledgement sent before the flush completed leaves the
// client well before the flush's response leaves the server.
//
// The cas modes test remote compare-and-swap instead: each round has an
// 8-byte counter (one per cache line, after the records), which the client
// raises from k to k+1 with CompareAndSwap, each followed by a persistent
// flush of the word, and prints "ACK r k+1" when the flush completes
// (cas-on-flush) or when the CAS was posted (cas-on-post, its negative
// control). The server reports a counter at v as seqs 1..v in its HAVE
// line (no round writes both records and a counter).
package main

import (
	"context"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/gorpma/rpma/conn"
	"github.com/gorpma/rpma/cq"
	"github.com/gorpma/rpma/ep"
	"github.com/gorpma/rpma/internal/cpuflush"
	"github.com/gorpma/rpma/internal/powerloss"
	"github.com/gorpma/rpma/internal/roce"
	"github.com/gorpma/rpma/mr"
	"github.com/gorpma/rpma/peer"
	"github.com/gorpma/rpma/pmem"
	"github.com/gorpma/rpma/rpma"
)

const port = "7204"

func main() {
	if len(os.Args) < 2 {
		fatal("usage: plnode server|client [flags]")
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	rounds := fs.Int("rounds", 20, "rounds (kill points)")
	perRound := fs.Int("per-round", 2000, "records a round may write")
	mode := fs.String("mode", "ack-on-flush", "client: ack-on-flush, ack-on-post, ack-on-write, ack-on-write-flushed, cas-on-flush or cas-on-post")
	peerIP := fs.String("peer", "", "client: the server's address")
	fs.BoolVar(&ackToServer, "ack-to-server", false, "client: write each acknowledgement to the server too")
	fs.BoolVar(&exitWhenDone, "exit-when-done", false, "client: stop after the first round's DONE")
	fs.BoolVar(&requireNativeFlush, "require-native-flush", false, "client: fail unless the connection flushes natively (ibv_wr_flush)")
	gpspm := fs.Bool("gpspm", false, "server: answer GPSPM flush requests (client: -mode gpspm)")
	skipPersist := fs.Bool("skip-persist", false, "server, with -gpspm: answer without persisting (the negative control)")
	delayReads := fs.Duration("delay-read-responses", 0, "server: hold RDMA READ responses this long at egress")
	fs.Parse(os.Args[2:])
	if *delayReads > 0 {
		delayReadResponses(*delayReads)
	}
	var err error
	switch os.Args[1] {
	case "server":
		err = server(*rounds, *perRound, *gpspm, *skipPersist)
	case "client":
		err = client(*peerIP, *mode, *rounds, *perRound)
	default:
		err = fmt.Errorf("unknown role %q", os.Args[1])
	}
	if err != nil {
		fatal("plnode %s: %v", os.Args[1], err)
	}
}

// The client's wire-check options (see the package comment).
var ackToServer, exitWhenDone bool

// requireNativeFlush makes the client fail when its flush is emulated: the
// native-flush power-loss test must not pass on the emulated path.
var requireNativeFlush bool

// delayReadResponses holds the node's outgoing RDMA READ responses (BTH
// opcodes 0x0D-0x10, at byte 28 of an IPv4 packet without options: 20 of
// IP, 8 of UDP) for d, and nothing else: a prio qdisc whose third band is
// a netem delay, and u32 filters into it.
func delayReadResponses(d time.Duration) {
	tc := func(args ...string) {
		if out, err := exec.Command(toolPath("tc"), args...).CombinedOutput(); err != nil {
			fatal("tc %v: %v: %s", args, err, out)
		}
	}
	tc("qdisc", "replace", "dev", "eth0", "root", "handle", "1:", "prio")
	tc("qdisc", "add", "dev", "eth0", "parent", "1:3", "handle", "30:", "netem", "delay", d.String())
	for op := roce.ReadResponseFirst; op <= roce.ReadResponseOnly; op++ {
		tc("filter", "add", "dev", "eth0", "parent", "1:", "protocol", "ip", "prio", "1", "u32",
			"match", "ip", "protocol", "17", "0xff",
			"match", "ip", "dport", fmt.Sprint(roce.UDPPort), "0xffff",
			"match", "u8", fmt.Sprintf("%#x", uint8(op)), "0xff", "at", "28",
			"flowid", "1:3")
	}
}

// toolPath finds a system tool (tc), also where PATH does not reach.
func toolPath(name string) string {
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	for _, d := range []string{"/usr/sbin", "/sbin"} {
		if _, err := os.Stat(d + "/" + name); err == nil {
			return d + "/" + name
		}
	}
	return name
}

func fatal(format string, args ...any) {
	fmt.Fprintf(os.Stderr, format+"\n", args...)
	os.Exit(1)
}

// ranges formats sorted seqs as "a-b,c,d-e" ("-" when empty).
func ranges(seqs []uint32) string {
	if len(seqs) == 0 {
		return "-"
	}
	var b strings.Builder
	for i := 0; i < len(seqs); {
		j := i
		for j+1 < len(seqs) && seqs[j+1] == seqs[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		if i == j {
			fmt.Fprintf(&b, "%d", seqs[i])
		} else {
			fmt.Fprintf(&b, "%d-%d", seqs[i], seqs[j])
		}
		i = j + 1
	}
	return b.String()
}

func server(rounds, perRound int, gpspm, skipPersist bool) error {
	ip, path := os.Getenv("RPMA_TEST_IP"), os.Getenv("RPMA_TEST_PMEM")
	if ip == "" || path == "" {
		return errors.New("needs RPMA_TEST_IP and RPMA_TEST_PMEM (run in rxevm -pmem)")
	}
	region, err := pmem.Map(path, 0)
	if err != nil {
		return err
	}
	defer region.Close()
	size := logOffset(rounds, perRound) + logSize(rounds, perRound)
	if region.Len() < size {
		return fmt.Errorf("%s holds %d bytes, the rounds need %d", path, region.Len(), size)
	}
	mem := region.Bytes()[:size]
	for r := 0; r < rounds; r++ {
		var have []uint32
		for s := 0; s < perRound; s++ {
			off := powerloss.Offset(uint32(r), uint32(s), perRound)
			rec, err := powerloss.Parse(mem[off:])
			if err == nil && rec.Round == uint32(r) && rec.Seq == uint32(s) {
				have = append(have, uint32(s))
			}
		}
		off := counterOffset(rounds, perRound, r)
		for v := uint64(1); v <= binary.NativeEndian.Uint64(mem[off:]) && v <= uint64(perRound); v++ {
			have = append(have, uint32(v))
		}
		fmt.Printf("HAVE %d %s\n", r, ranges(have))
	}
	log := openLog(mem, logOffset(rounds, perRound))
	if gpspm {
		for r, seqs := range log.answeredPersisted(rounds, perRound) {
			slices.Sort(seqs)
			fmt.Printf("PERSISTED %d %s\n", r, ranges(slices.Compact(seqs)))
		}
	}

	dev, err := peer.DeviceForAddress(ip, rpma.IbvContextLocal)
	if err != nil {
		return err
	}
	defer dev.Close()
	p, err := peer.New(dev)
	if err != nil {
		return err
	}
	defer p.Close()
	m, err := mr.Reg(p, mem, mr.UsageWriteDst|mr.UsageReadSrc|mr.UsageFlushPersistent|mr.UsageFlushVisibility|mr.UsageAtomicDst)
	if err != nil {
		return err
	}
	defer m.Dereg()
	e, err := ep.Listen(p, ip, port)
	if err != nil {
		return err
	}
	desc := m.ExtendedDescriptor()
	pcfg := peer.Cfg{DirectWriteToPMem: true}.Descriptor()
	pdata := append(desc[:], pcfg[:]...)
	fmt.Println("READY")

	// One connection: a client that reconnects must find the next server.
	next := func(cfg *conn.Config) (*conn.ConnReq, error) { return e.NextConnReq(context.Background(), cfg) }
	if gpspm {
		msg, err := mr.Reg(p, make([]byte, gpspmMsgSize), mr.UsageSend|mr.UsageRecv)
		if err != nil {
			return err
		}
		defer msg.Dereg()
		c, err := acceptGPSPM(next, msg, pdata)
		if err != nil {
			return err
		}
		e.Shutdown()
		defer c.Close()
		cpuflush.Observe(log.observe)
		defer cpuflush.Observe(nil)
		serveGPSPM(c, region, msg, log, skipPersist)
		c.Disconnect()
		return nil
	}
	req, err := next(nil)
	if err != nil {
		return err
	}
	e.Shutdown()
	c, err := req.Connect(pdata)
	if err != nil {
		return err
	}
	defer c.Close()
	for {
		ev, err := c.NextEvent(context.Background())
		if err != nil || ev == rpma.ConnClosed || ev == rpma.ConnLost {
			c.Disconnect()
			return nil
		}
	}
}

// connect connects to the server, retrying while none listens.
func connect(p *peer.Peer, ip string, cfg *conn.Config) (*conn.Conn, error) {
	deadline := time.Now().Add(6 * time.Minute)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		c, err := tryConnect(ctx, p, ip, cfg)
		cancel()
		if err == nil {
			return c, nil
		}
		if time.Now().After(deadline) {
			return nil, err
		}
		time.Sleep(300 * time.Millisecond)
	}
}

func tryConnect(ctx context.Context, p *peer.Peer, ip string, cfg *conn.Config) (*conn.Conn, error) {
	req, err := conn.NewRequest(ctx, p, ip, port, cfg)
	if err != nil {
		return nil, err
	}
	c, err := req.Connect(nil)
	if err != nil {
		return nil, err
	}
	ev, err := c.NextEvent(ctx)
	if err == nil && ev != rpma.ConnEstablished {
		err = fmt.Errorf("connection %v", ev)
	}
	if err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// counterOffset is where round r's counter lives: a cache line each,
// after the records of rounds rounds.
func counterOffset(rounds, perRound, r int) int {
	return rounds*perRound*powerloss.RecordSize + r*powerloss.RecordSize
}

// ackOffset is where the client writes its acknowledgements (the wire
// check): a cache line after the counters.
func ackOffset(rounds, perRound int) int { return counterOffset(rounds, perRound, rounds) }

func client(ip, mode string, rounds, perRound int) error {
	switch mode {
	case "ack-on-flush", "ack-on-post", "ack-on-write", "ack-on-write-flushed", "cas-on-flush", "cas-on-post", "gpspm":
	default:
		return fmt.Errorf("mode %q", mode)
	}
	dev, err := peer.DeviceForAddress(ip, rpma.IbvContextRemote)
	if err != nil {
		return err
	}
	defer dev.Close()
	p, err := peer.New(dev)
	if err != nil {
		return err
	}
	defer p.Close()
	buf, err := pmem.Alloc(perRound * powerloss.RecordSize)
	if err != nil {
		return err
	}
	defer buf.Close()
	src, err := mr.Reg(p, buf.Bytes(), mr.UsageWriteSrc|mr.UsageReadDst)
	if err != nil {
		return err
	}
	defer src.Dereg()
	acks, err := mr.Reg(p, make([]byte, ackSlots*powerloss.AckSize), mr.UsageWriteSrc)
	if err != nil {
		return err
	}
	defer acks.Dereg()
	cfg := conn.DefaultConfig()
	cfg.SQSize, cfg.CQSize, cfg.RQSize = 128, 128, gpspmWindow
	msg, err := mr.Reg(p, make([]byte, gpspmMsgSize), mr.UsageSend|mr.UsageRecv)
	if err != nil {
		return err
	}
	defer msg.Dereg()
	// rxe retries forever with librpma's retry count of 7: a small count
	// makes a dead server end the round with a failed completion.
	cfg.RetryCount = 2
	for r := 0; r < rounds; r++ {
		c, err := connect(p, ip, cfg)
		if err != nil {
			return err
		}
		if requireNativeFlush && !c.NativeFlush() {
			return errors.New("-require-native-flush: this connection's flush is emulated")
		}
		fmt.Printf("ROUND %d\n", r)
		a := &acker{c: c, src: acks, off: ackOffset(rounds, perRound)}
		switch {
		case strings.HasPrefix(mode, "cas-"):
			err = casRound(c, src, buf.Bytes(), r, rounds, perRound, mode == "cas-on-post")
		case mode == "gpspm":
			err = gpspmRound(c, src, buf.Bytes(), msg, a, uint32(r), perRound)
		default:
			err = writeRound(c, src, buf.Bytes(), a, uint32(r), perRound, mode)
		}
		if exitWhenDone && errors.Is(err, errDone) {
			fmt.Println("FINISHED")
			closeBounded(c)
			return nil
		}
		fmt.Printf("BROKEN %d %v\n", r, err)
		closeBounded(c)
	}
	fmt.Println("FINISHED")
	return nil
}

func closeBounded(c *conn.Conn) {
	done := make(chan struct{})
	go func() {
		c.Disconnect()
		c.Close()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
	}
}

// Work request kinds, in the low two bits of a data-path opContext (the
// record's seq above them).
const (
	wrRecord = iota + 1 // the record's last request: it leaves the window
	wrWrite             // ack-on-write-flushed: the write, before its flush
	wrAck               // an acknowledgement written to the server
)

// ackSlots is how many acknowledgements may be in flight to the server
// (each has its own source bytes).
const ackSlots = 64

// errDone ends a round that wrote every record (-exit-when-done).
var errDone = errors.New("round done")

// acker acknowledges records: an ACK line and, with -ack-to-server, a
// write of the acknowledgement to the server's word at off.
type acker struct {
	c           *conn.Conn
	src         *mr.Local // ackSlots acknowledgements' source bytes
	off         int
	rem         *mr.Remote
	outstanding int // acknowledgement writes not completed
	next        int // the next slot of src
}

func (a *acker) ack(round, seq uint32) error {
	fmt.Printf("ACK %d %d\n", round, seq)
	if !ackToServer {
		return nil
	}
	if a.outstanding == ackSlots {
		return errors.New("every acknowledgement slot in flight")
	}
	slot := a.next % ackSlots * powerloss.AckSize
	a.next++
	powerloss.Record{Round: round, Seq: seq}.PutAck(a.src.Bytes()[slot:])
	a.outstanding++
	return a.c.Write(a.rem, a.off, a.src, slot, powerloss.AckSize, rpma.CompletionAlways, uint64(seq)<<2|wrAck)
}

// writeRound writes round's records, each acknowledged as mode says:
// ack-on-flush when the flush that follows it completed (the durable
// way), ack-on-post when posted (the negative control), ack-on-write when
// its write completed, with no flush at all, ack-on-write-flushed when its
// write completed, its flush posted but not completed. It keeps up to
// window records in flight.
func writeRound(c *conn.Conn, src *mr.Local, b []byte, a *acker, round uint32, perRound int, mode string) error {
	rem, err := serverRegion(c)
	if err != nil {
		return err
	}
	a.rem, a.outstanding = rem, 0
	const window = 16 // records: at most 32 requests, with the acknowledgements' 64 within SQSize
	q := c.CQ()
	wcs := make([]cq.WC, 32)
	inflight, next := 0, 0
	for next < perRound || inflight > 0 || a.outstanding > 0 {
		// A batch of completions acknowledges up to len(wcs) records.
		for inflight < window && next < perRound && a.outstanding <= ackSlots-len(wcs) {
			off := next * powerloss.RecordSize
			seq := uint32(next)
			powerloss.Record{Round: round, Seq: seq}.Put(b[off:])
			dst := powerloss.Offset(round, seq, perRound)
			ctx := uint64(seq) << 2
			var err error
			switch mode {
			case "ack-on-write":
				err = c.Write(rem, dst, src, off, powerloss.RecordSize, rpma.CompletionAlways, ctx|wrRecord)
			case "ack-on-write-flushed":
				err = c.Write(rem, dst, src, off, powerloss.RecordSize, rpma.CompletionAlways, ctx|wrWrite)
				if err == nil {
					err = c.Flush(rem, dst, powerloss.RecordSize, rpma.FlushPersistent, rpma.CompletionAlways, ctx|wrRecord)
				}
			default:
				err = c.WriteAndFlush(rem, dst, src, off, powerloss.RecordSize,
					rpma.FlushPersistent, rpma.CompletionAlways, ctx|wrRecord)
			}
			if err != nil {
				return err
			}
			if mode == "ack-on-post" {
				if err := a.ack(round, seq); err != nil {
					return err
				}
			}
			inflight++
			next++
		}
		n, err := nextWCs(q, wcs)
		if err != nil {
			return err
		}
		for _, wc := range wcs[:n] {
			if err := wc.Err(); err != nil {
				return err
			}
			seq := uint32(wc.OpContext >> 2)
			switch wc.OpContext & 3 {
			case wrAck:
				a.outstanding--
			case wrWrite:
				err = a.ack(round, seq)
			case wrRecord:
				inflight--
				if mode == "ack-on-flush" || mode == "ack-on-write" {
					err = a.ack(round, seq)
				}
			}
			if err != nil {
				return err
			}
		}
	}
	fmt.Printf("DONE %d\n", round)
	if exitWhenDone {
		return errDone
	}
	return probeUntilBroken(c, rem, powerloss.Offset(round, 0, perRound), uint64(perRound))
}

// serverRegion decodes the server's region (extended descriptor) and
// applies its peer configuration, from the connection's private data.
func serverRegion(c *conn.Conn) (*mr.Remote, error) {
	pd := c.PrivateData()
	if len(pd) < mr.ExtendedDescriptorSize+peer.CfgDescriptorSize {
		return nil, errors.New("short private data")
	}
	rem, err := mr.RemoteFromExtendedDescriptor(pd[:mr.ExtendedDescriptorSize])
	if err != nil {
		return nil, err
	}
	pcfg, err := peer.CfgFromDescriptor(pd[mr.ExtendedDescriptorSize:])
	if err != nil {
		return nil, err
	}
	return rem, c.ApplyRemotePeerCfg(pcfg)
}

// casRound raises round's counter from 0, one compare-and-swap at a time
// in order (up to window in flight, each with its flush: on an RC QP they
// execute in order, so CAS k->k+1 finds k), until perRound or the
// connection breaks. Each CAS's old value is checked.
func casRound(c *conn.Conn, src *mr.Local, b []byte, round, rounds, perRound int, ackOnPost bool) error {
	rem, err := serverRegion(c)
	if err != nil {
		return err
	}
	const window = 16
	word := counterOffset(rounds, perRound, round)
	q := c.CQ()
	wcs := make([]cq.WC, 32)
	inflight, next := 0, 0
	for next < perRound || inflight > 0 {
		for inflight < window && next < perRound {
			k := uint64(next)
			slot := int(k%window) * 8
			if err := c.CompareAndSwap(rem, word, src, slot, k, k+1, rpma.CompletionAlways, 2*k); err != nil {
				return err
			}
			if err := c.Flush(rem, word, 8, rpma.FlushPersistent, rpma.CompletionAlways, 2*k+1); err != nil {
				return err
			}
			if ackOnPost {
				fmt.Printf("ACK %d %d\n", round, k+1)
			}
			inflight++
			next++
		}
		n, err := nextWCs(q, wcs)
		if err != nil {
			return err
		}
		for _, wc := range wcs[:n] {
			if err := wc.Err(); err != nil {
				return err
			}
			k := wc.OpContext / 2
			if wc.OpContext%2 == 0 {
				if old := binary.NativeEndian.Uint64(b[int(k%window)*8:]); old != k {
					fatal("plnode client: round %d: CAS %d->%d found %d", round, k, k+1, old)
				}
				continue
			}
			if !ackOnPost {
				fmt.Printf("ACK %d %d\n", round, k+1)
			}
			inflight--
		}
	}
	fmt.Printf("DONE %d\n", round)
	return probeUntilBroken(c, rem, word, uint64(2*perRound))
}

// nextWCs polls q into wcs, waiting (a minute at most) while there is
// nothing, and returns how many it got (at least one) or the error.
func nextWCs(q *cq.CQ, wcs []cq.WC) (int, error) {
	for {
		n, err := q.GetWC(wcs)
		if !errors.Is(err, rpma.ErrNoCompletion) {
			return n, err
		}
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		err = q.Wait(ctx)
		cancel()
		if err != nil {
			return 0, err
		}
	}
}

// probeUntilBroken flushes dst every 300 ms until a flush fails.
func probeUntilBroken(c *conn.Conn, rem *mr.Remote, dst int, opContext uint64) error {
	q := c.CQ()
	wcs := make([]cq.WC, 1)
	// Nothing more to write this round. A powered-off server sends no
	// event, so probe it with a flush every 300 ms until one fails.
	for {
		time.Sleep(300 * time.Millisecond)
		if err := c.Flush(rem, dst, 8, rpma.FlushPersistent, rpma.CompletionAlways, opContext); err != nil {
			return err
		}
		if _, err := nextWCs(q, wcs[:1]); err != nil {
			return err
		}
		if err := wcs[0].Err(); err != nil {
			return err
		}
	}
}
