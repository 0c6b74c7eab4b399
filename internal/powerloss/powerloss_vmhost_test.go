//go:build linux && vmhost

package powerloss

import (
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gorpma/rpma/internal/vm"
	"github.com/gorpma/rpma/internal/vm/vmtest"
)

// Parameters of the test. Each phase boots its client once and a server
// per kill point plus one (~8 s each under TCG), and each kill point adds
// its writes: about 20 s of make test's time per kill point on a fast
// host, 45 s on a slow one, whose CI budget bounds them (the kill points
// are random, so the runs add up to more than any one). A control loses
// 13-16 records per kill point (doc/persistence.md), so 2 are plenty to
// fail.
const (
	killPoints       = 4            // kill points of the real test
	controlRounds    = 2            // kill points of the negative control
	casKillPoints    = 2            // kill points of the compare-and-swap test
	casControl       = 3            // and of its negative control
	writeOnlyRounds  = 1            // kill points acknowledging on write completion, no flush (RPMA_POWERLOSS_ACK_ON_WRITE=1)
	gpspmKillPoints  = 2            // kill points of the GPSPM test
	gpspmControl     = 1            // and of its negative control (the server skips the persist: every answer is caught)
	nativeKillPoints = 2            // kill points with native flush (Debian 13 userspace)
	nativeControl    = 2            // and of its negative control
	perRound         = 2000         // records a round may write
	pmemSize         = 64 << 20     // the NVDIMM; perRound*RecordSize*rounds must fit
	wireDelay        = "delay 20ms" // netem on each NIC: writes stay in flight
	roundTimeout     = 3 * time.Minute
	maxAckedPerKill  = perRound / 2
)

// TestMain lets this test binary serve as the VMs' guest agent.
func TestMain(m *testing.M) {
	if vm.IsGuestAgent(os.Args) {
		vm.GuestMain(os.Args[2])
	}
	os.Exit(m.Run())
}

func buildPlnode(t *testing.T, env ...string) string {
	bin := filepath.Join(t.TempDir(), "plnode")
	cmd := exec.Command("go", "build", "-race=false", "-o", bin, "./plnode")
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))
	return bin
}

// roundResult is what one kill point left behind.
type roundResult struct {
	acked    map[uint32]bool // seqs the client acknowledged
	survived map[uint32]bool // seqs the next server found valid
	// GPSPM: seqs the server answered after a write-back covering them
	// (its log, read by the next server).
	persisted map[uint32]bool
}

// phase runs rounds kill points with the client in mode (ack-on-flush,
// ack-on-post, ack-on-write, cas-on-flush, cas-on-post; gpspm, or
// gpspm-skip-persist: the client in gpspm mode, the server skipping the
// persist) and returns each round's result.
func phase(t *testing.T, p *vm.Prepared, plnode, mode string, rounds int, clientArgs ...string) []roundResult {
	clientMode, serverArgs := mode, []string(nil)
	switch mode {
	case "gpspm":
		serverArgs = []string{"-gpspm"}
	case "gpspm-skip-persist":
		clientMode, serverArgs = "gpspm", []string{"-gpspm", "-skip-persist"}
	}
	nv := filepath.Join(t.TempDir(), "nvdimm.img")
	w, err := vm.NewWire(wireDelay)
	require.NoError(t, err)
	res := make([]roundResult, rounds)
	for i := range res {
		res[i] = roundResult{acked: map[uint32]bool{}, survived: map[uint32]bool{}, persisted: map[uint32]bool{}}
	}
	args := []string{"-rounds", strconv.Itoa(rounds), "-per-round", strconv.Itoa(perRound)}

	var clientOut *vmtest.Lines
	var client *vm.Machine
	defer func() {
		if client != nil {
			client.Close()
		}
	}()

	var mu sync.Mutex
	acked := func(round, seq uint32) {
		mu.Lock()
		res[round].acked[seq] = true
		mu.Unlock()
	}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
	for k := 0; k <= rounds; k++ {
		name := fmt.Sprintf("%s server %d", mode, k)
		server, serverOut, s := vmtest.Boot(t, p, name, roundTimeout, func(stdout io.Writer) vm.Node {
			return vm.Node{Index: 0, Wire: w, Stdout: stdout, Stderr: vmtest.LogWriter(t, name+" stderr"),
				PMem: vm.PMem{Size: pmemSize, File: nv, Mode: "devdax"},
				Argv: append(append([]string{plnode, "server"}, serverArgs...), args...)}
		}, "HAVE ", "PERSISTED ", "READY")
		// The fresh server first reports what survived of earlier rounds
		// (and, GPSPM, what its predecessors persisted before answering).
		for ; s != "READY"; s = serverOut.Next(t, roundTimeout, "HAVE ", "PERSISTED ", "READY") {
			var kind string
			var r uint32
			var ranges string
			_, err := fmt.Sscanf(s, "%s %d %s", &kind, &r, &ranges)
			require.NoError(t, err, s)
			if int(r) < rounds {
				into := res[r].survived
				if kind == "PERSISTED" {
					into = res[r].persisted
				}
				for _, seq := range parseRanges(t, ranges) {
					into[seq] = true
				}
			}
		}
		if k == rounds {
			server.Close()
			break
		}
		var round string
		if client == nil {
			// The client boots once the first server listens, so that it
			// never talks to a wire with nobody on the other end (seen to
			// stall address resolution at the start of a phase).
			client, clientOut, round = vmtest.Boot(t, p, mode+" client", roundTimeout, func(stdout io.Writer) vm.Node {
				return vm.Node{Index: 1, Wire: w, Stdout: stdout, Stderr: vmtest.LogWriter(t, mode+" client stderr"),
					Argv: append(append([]string{plnode, "client", "-mode", clientMode, "-peer", vm.NodeIP(0)}, clientArgs...), args...)}
			}, "ROUND ")
		} else {
			round = clientOut.Next(t, roundTimeout, "ROUND ")
		}
		target := 1 + rng.IntN(maxAckedPerKill)
		require.Equal(t, fmt.Sprintf("ROUND %d", k), round)
		for n := 0; n < target; {
			s := clientOut.Next(t, roundTimeout, "ACK ", "DONE ")
			if strings.HasPrefix(s, "DONE ") {
				break
			}
			var r, seq uint32
			_, err := fmt.Sscanf(s, "ACK %d %d", &r, &seq)
			require.NoError(t, err, s)
			require.EqualValues(t, k, r, s)
			acked(r, seq)
			n++
		}
		server.Kill() // power loss
		server.Close()
		// Acknowledgements already in the pipe count too: they were given
		// before the kill took effect.
		drain(clientOut, acked)
	}
	return res
}

// drain consumes the ACK lines already written.
func drain(l *vmtest.Lines, acked func(r, s uint32)) {
	for {
		select {
		case s, ok := <-l.C:
			if !ok {
				return
			}
			var r, seq uint32
			if _, err := fmt.Sscanf(s, "ACK %d %d", &r, &seq); err == nil {
				acked(r, seq)
			} else {
				l.Pending = append(l.Pending, s)
			}
		case <-time.After(200 * time.Millisecond):
			return
		}
	}
}

func parseRanges(t *testing.T, s string) []uint32 {
	var out []uint32
	if s == "-" {
		return out
	}
	for _, part := range strings.Split(s, ",") {
		a, b, found := strings.Cut(part, "-")
		lo, err := strconv.ParseUint(a, 10, 32)
		require.NoError(t, err, s)
		hi := lo
		if found {
			hi, err = strconv.ParseUint(b, 10, 32)
			require.NoError(t, err, s)
		}
		for v := lo; v <= hi; v++ {
			out = append(out, uint32(v))
		}
	}
	return out
}

// losses counts, over a phase's rounds, the acknowledged seqs that did not
// survive, the survivors never acknowledged, and the acknowledged.
func losses(t *testing.T, mode string, rounds []roundResult, requireAcks bool) (lost, survivedUnacked, acked int) {
	for r, rr := range rounds {
		var l, u int
		for seq := range rr.acked {
			if !rr.survived[seq] {
				l++
			}
		}
		for seq := range rr.survived {
			if !rr.acked[seq] {
				u++
			}
		}
		t.Logf("%s kill point %d: %d acknowledged, %d survived, %d acknowledged lost, %d unacknowledged survived",
			mode, r, len(rr.acked), len(rr.survived), l, u)
		if requireAcks {
			require.NotEmpty(t, rr.acked, "%s kill point %d acknowledged nothing", mode, r)
		}
		lost, survivedUnacked, acked = lost+l, survivedUnacked+u, acked+len(rr.acked)
	}
	t.Logf("%s: %d kill points, %d acknowledged, %d lost, %d unacknowledged survived",
		mode, len(rounds), acked, lost, survivedUnacked)
	return lost, survivedUnacked, acked
}

func TestPowerLoss(t *testing.T) {
	require.LessOrEqual(t, (killPoints+1)*(perRound+1)*RecordSize, pmemSize)
	plnode := buildPlnode(t)
	p, err := vm.Prepare(vm.Config{Log: os.Stderr, Timeout: 30 * time.Minute})
	require.NoError(t, err)

	lost, _, _ := losses(t, "ack-on-flush", phase(t, p, plnode, "ack-on-flush", killPoints), true)
	require.Zero(t, lost, "acknowledged records lost")
	// Negative control: acknowledging at post time must lose records.
	lost, _, _ = losses(t, "ack-on-post", phase(t, p, plnode, "ack-on-post", controlRounds), false)
	require.Positive(t, lost, "the negative control lost nothing: the test cannot tell durable from not")
	// Acknowledging on the write's completion, with no flush: wrong on
	// a real platform (the data may sit in the target's caches or NIC),
	// but on rxe the payload is placed before the ACK and the emulated
	// NVDIMM has no cache, so this may lose nothing: the figure is
	// published (doc/persistence.md), not asserted, and make test skips
	// the phase (three boots for a figure); RPMA_POWERLOSS_ACK_ON_WRITE=1
	// runs it. The wire-level check (TestFlushOnTheWire) is what can tell
	// a missing flush here.
	if os.Getenv("RPMA_POWERLOSS_ACK_ON_WRITE") == "1" {
		lost, _, acked := losses(t, "ack-on-write", phase(t, p, plnode, "ack-on-write", writeOnlyRounds), false)
		t.Logf("ack-on-write (no flush): %d acknowledged, %d lost", acked, lost)
	}

	// Remote compare-and-swap, each flushed: an acknowledged counter value
	// survives the power cut.
	lost, _, _ = losses(t, "cas-on-flush", phase(t, p, plnode, "cas-on-flush", casKillPoints), true)
	require.Zero(t, lost, "acknowledged counter values lost")
	lost, _, _ = losses(t, "cas-on-post", phase(t, p, plnode, "cas-on-post", casControl), false)
	require.Positive(t, lost, "the CAS negative control lost nothing: the test cannot tell durable from not")
}

// TestPowerLossGPSPM: the server persists each record on request and
// answers (GPSPM). An acknowledged record survives the power cut, and the
// server's log shows it written back before the answer. On rxe a record
// the server forgot to persist survives anyway (no cache under TCG), so
// the log is what must catch the negative control.
func TestPowerLossGPSPM(t *testing.T) {
	require.LessOrEqual(t, (gpspmKillPoints+1)*(perRound+1)*RecordSize*3, pmemSize)
	plnode := buildPlnode(t)
	p, err := vm.Prepare(vm.Config{Log: os.Stderr, Timeout: 30 * time.Minute})
	require.NoError(t, err)

	res := phase(t, p, plnode, "gpspm", gpspmKillPoints)
	lost, _, _ := losses(t, "gpspm", res, true)
	require.Zero(t, lost, "acknowledged GPSPM records lost")
	require.Zero(t, unpersisted(t, "gpspm", res), "GPSPM records acknowledged without a write-back before the answer")
	res = phase(t, p, plnode, "gpspm-skip-persist", gpspmControl)
	lost, _, _ = losses(t, "gpspm-skip-persist", res, false)
	t.Logf("gpspm-skip-persist: %d acknowledged records lost to the power cut", lost)
	require.Positive(t, unpersisted(t, "gpspm-skip-persist", res), "a server that skips the persist was not caught")
}

// unpersisted counts, over a GPSPM phase, the acknowledged records whose
// answer no write-back covering them preceded.
func unpersisted(t *testing.T, mode string, rounds []roundResult) int {
	n := 0
	for r, rr := range rounds {
		u := 0
		for seq := range rr.acked {
			if !rr.persisted[seq] {
				u++
			}
		}
		t.Logf("%s kill point %d: %d acknowledged, %d answered after their write-back, %d acknowledged without", mode, r, len(rr.acked), len(rr.persisted), u)
		n += u
	}
	return n
}

// TestPowerLossNativeFlush: the promise of TestPowerLoss with native RDMA
// FLUSH (ibv_wr_flush): both VMs run 6.12 in the Debian 13 userspace
// (rdma-core 56), plnode is built with the rpma_native_flush tag against
// its headers, and the client refuses to run on the emulated path. The
// server's region is Device DAX, registered for a persistent flush.
func TestPowerLossNativeFlush(t *testing.T) {
	p, err := vm.Prepare(vm.Config{Log: os.Stderr, Timeout: 30 * time.Minute, Userspace: vm.UserspaceDebian13})
	require.NoError(t, err)
	plnode := buildPlnode(t, "GOFLAGS=-tags=rpma_native_flush", "CGO_CFLAGS=-O2 -g -I"+p.Userspace().Include)

	lost, _, _ := losses(t, "native ack-on-flush", phase(t, p, plnode, "ack-on-flush", nativeKillPoints, "-require-native-flush"), true)
	require.Zero(t, lost, "acknowledged records lost with native flush")
	lost, _, _ = losses(t, "native ack-on-post", phase(t, p, plnode, "ack-on-post", nativeControl, "-require-native-flush"), false)
	require.Positive(t, lost, "the negative control lost nothing: the test cannot tell durable from not")
}
