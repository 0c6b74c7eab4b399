//go:build linux && vmhost

package faults

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gorpma/rpma/internal/vm"
	"github.com/gorpma/rpma/internal/vm/vmtest"
)

const (
	bootTimeout = 4 * time.Minute
	// wireDelay makes the other side slow (100 ms each way) but alive:
	// the connections with a PeerTimeout must not be declared dead for it.
	wireDelay = "delay 100ms"
	// aliveFor is how long everything runs on the slow wire before the
	// kill: several PeerTimeouts.
	aliveFor    = 6 * time.Second
	peerTimeout = 2 * time.Second // faultnode's timeout-* cases
)

// expect is how a case must end: the end faultnode reports, within
// [min, max] of the kill.
type expect struct {
	end      string
	alt      string // another end that is as right ("" for none)
	min, max time.Duration
}

var (
	// RetryCount 2: three ACK timeouts (0.54 s each on 6.12, 2.2 s on 6.1).
	retryExceeded = expect{end: "retry-exceeded", min: 0, max: 10 * time.Second}
	// PeerTimeout D: between D and 1.5 × D after the last answer (at most
	// D/4 before the kill), plus 2 s for TCG and the kill file's polling.
	peerTimedOut = expect{end: "peer-timeout", min: peerTimeout / 2, max: peerTimeout*3/2 + 2*time.Second}
	// Nothing ends the connection within faultnode's 10 s patience.
	never = expect{end: "none", min: 10 * time.Second, max: 15 * time.Second}
)

// TestMain lets this test binary serve as the VMs' guest agent.
func TestMain(m *testing.M) {
	if vm.IsGuestAgent(os.Args) {
		vm.GuestMain(os.Args[2])
	}
	os.Exit(m.Run())
}

func buildFaultnode(t *testing.T) string {
	bin := filepath.Join(t.TempDir(), "faultnode")
	out, err := exec.Command("go", "build", "-race=false", "-o", bin, "./faultnode").CombinedOutput()
	require.NoError(t, err, string(out))
	return bin
}

// scenario is one fault: the survivor's and the lender's arguments, and
// how the fault is made. The survivor gets -fault-file (created as the
// fault begins) and -restore-file; both nodes get -cut-file and
// -restore-file (they apply a cut themselves).
type scenario struct {
	survivorArgs  []string
	lenderArgs    []string
	survivorFirst bool   // the survivor accepts: it boots first
	linkNode      string // "survivor" or "lender": the node that gets -link-file
	want          map[string]expect
	// fault makes the fault happen; f.fault must exist once it began,
	// unless the survivor sets its own link (linkNode), which marks it.
	fault func(t *testing.T, lender *vm.Machine, f files)
}

// files are the names of the files the nodes watch.
type files struct{ fault, cut, restore, die, netem, link string }

func touch(t *testing.T, path string) { require.NoError(t, os.WriteFile(path, nil, 0o644)) }

// nextFile writes contents as the next of path.1, path.2, ... (faultnode's
// watchFile reads them in order), whole, by a rename.
func nextFile(t *testing.T, path, contents string) {
	fileSeqMu.Lock()
	fileSeq[path]++
	name := fmt.Sprintf("%s.%d", path, fileSeq[path])
	fileSeqMu.Unlock()
	require.NoError(t, os.WriteFile(name+".tmp", []byte(contents), 0o644))
	require.NoError(t, os.Rename(name+".tmp", name))
}

var (
	fileSeqMu sync.Mutex
	fileSeq   = map[string]int{}
)

// setNetem has the nodes apply netem params (on top of the wire's delay).
func setNetem(t *testing.T, f files, params string) { nextFile(t, f.netem, params) }

// run boots the survivor (and, in the order the roles need, the side
// that fails), lets them run on the slow wire, makes the fault and checks
// each case's end against want.
func (sc scenario) run(t *testing.T) {
	bin := buildFaultnode(t)
	p, err := vm.Prepare(vm.Config{Log: os.Stderr, Timeout: 10 * time.Minute})
	require.NoError(t, err)
	w, err := vm.NewWire(wireDelay)
	require.NoError(t, err)
	dir := t.TempDir()
	f := files{fault: filepath.Join(dir, "fault"), cut: filepath.Join(dir, "cut"),
		restore: filepath.Join(dir, "restore"), die: filepath.Join(dir, "die"), netem: filepath.Join(dir, "netem"), link: filepath.Join(dir, "link")}
	var cases []string
	for name := range sc.want {
		cases = append(cases, name)
	}
	common := []string{"-cut-file", f.cut, "-restore-file", f.restore, "-netem", wireDelay, "-netem-file", f.netem}
	const survivorIndex = 1
	survivorArgv := append([]string{bin, "survive", "-peer", vm.NodeIP(1 - survivorIndex),
		"-cases", strings.Join(cases, ","), "-fault-file", f.fault}, append(common, sc.survivorArgs...)...)
	lenderArgv := append(append([]string{bin}, sc.lenderArgs...), append(common, "-die-file", f.die)...)
	switch sc.linkNode {
	case "survivor":
		survivorArgv = append(survivorArgv, "-link-file", f.link)
	case "lender":
		lenderArgv = append(lenderArgv, "-link-file", f.link)
	}

	bootNode := func(name string, index int, argv []string, prefixes ...string) (*vm.Machine, *vmtest.Lines) {
		m, out, _ := vmtest.Boot(t, p, name, bootTimeout, func(stdout io.Writer) vm.Node {
			return vm.Node{Index: index, Wire: w, Stdout: stdout, Stderr: vmtest.LogWriter(t, name+" stderr"), Argv: argv}
		}, prefixes...)
		t.Cleanup(m.Close)
		t.Cleanup(func() { // before Close: a failed test shows the guest's kernel log
			if t.Failed() {
				t.Logf("%s: guest dmesg:\n%s", name, m.Dmesg(10*time.Second))
			}
		})
		return m, out
	}
	var lender *vm.Machine
	var out *vmtest.Lines
	if sc.survivorFirst {
		_, out = bootNode("survivor", survivorIndex, survivorArgv, "LISTENING")
		lender, _ = bootNode("lender", 1-survivorIndex, lenderArgv, "CONNECTED")
		out.Next(t, bootTimeout, "READY")
	} else {
		lender, _ = bootNode("lender", 1-survivorIndex, lenderArgv, "LISTENING")
		_, out = bootNode("survivor", survivorIndex, survivorArgv, "READY")
	}
	time.Sleep(aliveFor)
	sc.fault(t, lender, f)

	// Every case's result first, then the checks: a failure shows them all.
	type result struct {
		end  string
		took time.Duration
	}
	got := map[string]result{}
	for range sc.want {
		s := out.Next(t, 2*time.Minute, "RESULT ")
		var name, end string
		var ms int64
		_, err := fmt.Sscanf(s, "RESULT %s ms=%d end=%s", &name, &ms, &end)
		require.NoError(t, err, s)
		_, dup := got[name]
		require.False(t, dup, "case %s reported twice", name)
		got[name] = result{end, time.Duration(ms) * time.Millisecond}
		t.Logf("case %s: %s after %v", name, end, got[name].took)
	}
	for name, e := range sc.want {
		r, ok := got[name]
		require.True(t, ok, "case %s not reported", name)
		if e.alt == "" || r.end != e.alt {
			require.Equal(t, e.end, r.end, "case %s ended with %s after %v, want %s", name, r.end, r.took, e.end)
		}
		require.GreaterOrEqual(t, r.took, e.min, "case %s ended %v after the fault: too early (still alive before it?)", name, r.took)
		require.LessOrEqual(t, r.took, e.max, "case %s ended %v after the fault: too late", name, r.took)
	}
	var fds, objects, cobjects, kernel int
	s := out.Next(t, time.Minute, "LEAKS ")
	_, err = fmt.Sscanf(s, "LEAKS fds=%d objects=%d cobjects=%d kernel=%d", &fds, &objects, &cobjects, &kernel)
	require.NoError(t, err, s)
	require.Zero(t, kernel, "the survivor's kernel reported bugs (its KERNEL lines above)")
	require.Zero(t, fds, "file descriptors left open after closing everything")
	require.Zero(t, objects, "C-backed objects left after closing everything")
	require.Zero(t, cobjects, "verbs and rdma_cm objects left after closing everything (its COBJECTS lines above)")
}

// connecting returns the scenario in which the survivor connects to a
// lender that accepts: the lender is the server.
func connecting(want map[string]expect, fault func(*testing.T, *vm.Machine, files)) scenario {
	return scenario{survivorArgs: []string{"-as", "connect"}, lenderArgs: []string{"lend", "-accept", fmt.Sprint(len(want))},
		want: want, fault: fault}
}

// accepting returns the scenario with the roles reversed: the survivor
// accepts and the lender connects to it, the client fails and the server
// survives.
func accepting(want map[string]expect, fault func(*testing.T, *vm.Machine, files)) scenario {
	halfOpen := 0
	for name := range want {
		if strings.HasPrefix(name, "halfopen-") {
			halfOpen++ // faultnode's half-open cases: the lender never completes their handshake
		}
	}
	return scenario{survivorArgs: []string{"-as", "accept"},
		lenderArgs:    []string{"lend-connect", "-peer", vm.NodeIP(1), "-conns", fmt.Sprint(len(want)), "-halfopen", fmt.Sprint(halfOpen)},
		survivorFirst: true, want: want, fault: fault}
}

// powerLoss kills the lender's VM: no disconnect reaches the survivor.
func powerLoss(t *testing.T, lender *vm.Machine, f files) {
	lender.Kill()
	touch(t, f.fault)
}

// TestServerVanishes: the accepting side's VM (it lends memory and has
// nothing outstanding) loses power. On the connecting side, RetryCount 2
// fails requests (busy, and one posted after the kill) with
// IBV_WC_RETRY_EXC_ERR; RetryCount 7 with PeerTimeout 2 s reports the
// connection lost, busy or idle; RetryCount 7 alone never ends (rxe
// retries for ever): the control that shows the bounds come from the
// settings.
func TestServerVanishes(t *testing.T) {
	want := map[string]expect{
		"retry2-busy":  retryExceeded,
		"retry2-after": retryExceeded,
		"timeout-busy": peerTimedOut,
		"timeout-idle": peerTimedOut,
		"retry7-after": never,
	}
	connecting(want, powerLoss).run(t)
}

// TestClientVanishes: the connecting side's VM (RetryCount 7, lending its
// memory) loses power. The accepting side's own RetryCount is ignored
// (its QP takes the connecting side's 7), so a request posted after the
// kill never ends; PeerTimeout 2 s reports the connection lost, busy or
// idle, so that a server can free a dead client's resources. A
// connection whose client never completed the handshake before it died
// (which rdma_cm reported as UNREACHABLE only after 70 s, with no bound
// of the library's) is lost at its EstablishTimeout, 10 s after its
// accept, which was aliveFor (6 s) before the kill.
func TestClientVanishes(t *testing.T) {
	want := map[string]expect{
		"timeout-busy":  peerTimedOut,
		"timeout-idle":  peerTimedOut,
		"ignored-after": never,
		"halfopen-idle": {end: "peer-timeout", min: 0, max: 10*time.Second - aliveFor + 4*time.Second},
	}
	accepting(want, powerLoss).run(t)
}

// TestServerProcessKilled: the lending process is killed (SIGKILL) while
// its VM runs on. Its kernel tears its connections down and the survivor
// sees CLOSED, busy (the wait on the write's completion ends) or idle
// (NextEvent), within a few seconds, whatever the retry count.
func TestServerProcessKilled(t *testing.T) {
	closed := expect{end: "closed", min: 0, max: 5 * time.Second}
	want := map[string]expect{"closed-busy": closed, "closed-idle": closed}
	connecting(want, processKill).run(t)
}

// processKill has the lending process kill itself (SIGKILL).
func processKill(t *testing.T, _ *vm.Machine, f files) {
	touch(t, f.die)
	touch(t, f.fault)
}

// TestClientProcessKilled: TestServerProcessKilled with the roles
// reversed. The connecting process is killed; the accepting side sees
// CLOSED, busy or idle, within a few seconds, and frees the connections.
func TestClientProcessKilled(t *testing.T) {
	closed := expect{end: "closed", min: 0, max: 5 * time.Second}
	want := map[string]expect{"closed-busy": closed, "closed-idle": closed}
	accepting(want, processKill).run(t)
}

// cutFor is how long TestWireCut drops everything.
const cutFor = 8 * time.Second

// TestWireCut: both nodes drop all their egress for cutFor, then the
// wire is restored. With PeerTimeout 2 s the connection is lost within
// the bound, with RetryCount 2 its write fails; with neither (RetryCount
// 7) the stream stalls, resumes after the restore, and every block it
// wrote reads back intact.
func TestWireCut(t *testing.T) {
	want := map[string]expect{
		"timeout-busy": peerTimedOut,
		"retry2-busy":  retryExceeded,
		"resume-busy":  {end: "resumed", min: cutFor, max: cutFor + 5*time.Second},
	}
	connecting(want, wireCut).run(t)
}

// wireCut drops both nodes' egress for cutFor.
func wireCut(t *testing.T, _ *vm.Machine, f files) {
	touch(t, f.cut)
	touch(t, f.fault)
	time.Sleep(cutFor)
	touch(t, f.restore)
}

// TestWireCutAccepting: TestWireCut seen from the accepting side. With
// PeerTimeout 2 s the server reports the connection lost, busy or idle;
// without it (its retry count is the client's 7) the stream stalls and
// resumes intact after the restore.
func TestWireCutAccepting(t *testing.T) {
	want := map[string]expect{
		"timeout-busy": peerTimedOut,
		"timeout-idle": peerTimedOut,
		"resume-busy":  {end: "resumed", min: cutFor, max: cutFor + 5*time.Second},
	}
	accepting(want, wireCut).run(t)
}

// pollSlack: the nodes see the fault and restore files by polling them
// over 9p, each up to this late, so an end measured from the fault file
// to the restore can come this much short of the host's own interval.
const pollSlack = time.Second

// lossyPhases are the lossy wire's faults, in order, each for lossyPhase
// on both nodes' egress (on top of the 100 ms delay).
var lossyPhases = []string{"loss 1%", "loss 5%", "loss 5% duplicate 5% reorder 25% 50%", "loss 30%"}

const lossyPhase = 6 * time.Second

// TestLossyWire: both nodes' egress loses 1%, then 5%, then 5% with 5%
// duplicated and 25% reordered, then 30% of the packets, lossyPhase each,
// and then the wire is restored. Expected:
//   - RetryCount 7 (rxe: for ever), with rdma_cm's ACK timeout or a 33 ms
//     one: the stream goes on, slower, and after the restore every block
//     reads back with its last write (resumed);
//   - PeerTimeout 2 s with rdma_cm's ACK timeout (0.54 s on 6.12): a
//     request that needs several resends (30% loss) often goes unanswered
//     for longer than D, and the connection is then reported lost (in 3
//     runs of 7), but never before the lossy period's first phase; or it
//     is lucky and stays up (none);
//   - PeerTimeout 2 s with a 33 ms ACK timeout, and PeerTimeout 10 s: a
//     lossy peer is slow, not dead: nothing ends them (none, at the end
//     of their patience);
//   - RetryCount 2: three lost tries of one request in a row come with
//     enough loss, and the request fails (retry-exceeded, in 6 runs of
//     7), but never in the 1% phase; or it is lucky (none).
func TestLossyWire(t *testing.T) {
	want := lossyCases()
	want["lossy-retry2"] = expect{end: "retry-exceeded", alt: "none", min: lossyPhase, max: lossyAlive.max}
	connecting(want, lossyWire).run(t)
}

// lossyAlive is how a case nothing ends on the lossy wire ends: the busy
// cases' patience is 45 s.
var lossyAlive = expect{end: "none", min: 40 * time.Second, max: 50 * time.Second}

// lossyCases are the lossy wire's cases that either side can run.
func lossyCases() map[string]expect {
	lossy := time.Duration(len(lossyPhases)) * lossyPhase
	return map[string]expect{
		"lossy-verify":       {end: "resumed", min: lossy - pollSlack, max: lossy + 20*time.Second},
		"lossy-verify-ack":   {end: "resumed", min: lossy - pollSlack, max: lossy + 20*time.Second},
		"lossy-timeout2":     {end: "peer-timeout", alt: "none", min: lossyPhase, max: lossyAlive.max},
		"lossy-timeout2-ack": lossyAlive,
		"lossy-timeout10":    lossyAlive,
	}
}

// lossyWire runs the lossyPhases on both nodes' egress, then restores the
// wire.
func lossyWire(t *testing.T, _ *vm.Machine, f files) {
	touch(t, f.fault)
	for _, ph := range lossyPhases {
		t.Logf("%v: %s", time.Now().Format("15:04:05.000"), ph)
		setNetem(t, f, ph)
		time.Sleep(lossyPhase)
	}
	setNetem(t, f, "")
	touch(t, f.restore)
}

// TestLossyWireAccepting: TestLossyWire seen from the accepting side,
// whose retry count is the client's (7): the same ends as there, but no
// retry-count case (a server cannot set its own).
func TestLossyWireAccepting(t *testing.T) {
	accepting(lossyCases(), lossyWire).run(t)
}

// linkDownFor is how long TestLinkDown keeps the link down.
const linkDownFor = 8 * time.Second

// TestLinkDown: the survivor's own link goes down (ip link set eth0
// down) for linkDownFor, then up again. rxe flushes the QPs whose
// requests it cannot send: a connection with a request outstanding fails
// within about a second with IBV_WC_WR_FLUSH_ERR, whatever its retry
// count or PeerTimeout; an idle one with a PeerTimeout fails the same way
// at its next probe (reported lost, its cause the flushed probe); an idle
// one without fails so at its first request during the outage, and one
// that posts nothing until the link is back up survives it: its write
// then completes.
func TestLinkDown(t *testing.T) {
	want := linkDownCases()
	want["retry2-busy"] = want["link-verify"]
	sc := connecting(want, linkDown)
	sc.linkNode = "survivor"
	sc.run(t)
}

// linkDownCases are the cases of a link down that either side can run.
func linkDownCases() map[string]expect {
	flushed := expect{end: "flushed", min: 0, max: 5 * time.Second}
	return map[string]expect{
		"link-verify":  flushed,
		"timeout-busy": flushed,
		"timeout-idle": flushed,
		// Its one write is posted duringDelay (2 s) into the outage.
		"link-during": {end: "flushed", min: 2 * time.Second, max: 2*time.Second + 5*time.Second},
		// Its write is posted only once the survivor set its link up
		// again, so it cannot end earlier by itself; the lower bound
		// catches a write let through while the link was down. Half the
		// outage, not all of it: the survivor reads the host's link
		// files over 9p, and on a loaded host it once saw such a file 1.6 s
		// after the host made it.
		"link-restored": {end: "completed", min: linkDownFor / 2, max: linkDownFor + 10*time.Second},
	}
}

// linkDown sets the link of the node with -link-file down for
// linkDownFor, then up again. That node is the survivor, whose fault
// begins and ends as it sets its own link (not as it sees the fault and
// restore files, which 9p may show it late).
func linkDown(t *testing.T, _ *vm.Machine, f files) {
	nextFile(t, f.link, "down")
	time.Sleep(linkDownFor)
	nextFile(t, f.link, "up")
}

// TestLinkDownAccepting: TestLinkDown on the accepting side: the
// server's own link goes down. The same ends: requests outstanding are
// flushed, an idle connection with a PeerTimeout is reported lost at its
// next probe, one without fails at its first request during the outage
// and survives it if it posts nothing until the link is back.
func TestLinkDownAccepting(t *testing.T) {
	sc := accepting(linkDownCases(), linkDown)
	sc.linkNode = "survivor"
	sc.run(t)
}
