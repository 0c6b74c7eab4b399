//go:build linux && vmhost

package powerloss

import (
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gorpma/rpma/internal/vm"
	"github.com/gorpma/rpma/internal/vm/vmtest"
)

// The wire check's parameters.
const (
	wireRecords       = 200                    // records per run, each acknowledged
	readResponseDelay = 200 * time.Millisecond // the server's egress holds its READ responses this long
)

// flushOnTheWire runs one client in mode against a server whose READ
// responses are delayed, captures the wire from the client's connection
// to its end, and checks the flush order of what crossed it.
func flushOnTheWire(t *testing.T, p *vm.Prepared, plnode, mode string) FlushOrder {
	w, err := vm.NewWire("")
	require.NoError(t, err)
	args := []string{"-rounds", "1", "-per-round", strconv.Itoa(wireRecords)}
	nv := filepath.Join(t.TempDir(), "nvdimm.img")
	server, _, _ := vmtest.Boot(t, p, mode+" server", roundTimeout, func(stdout io.Writer) vm.Node {
		return vm.Node{Index: 0, Wire: w, Stdout: stdout, Stderr: vmtest.LogWriter(t, mode+" server stderr"),
			PMem: vm.PMem{Size: pmemSize, File: nv, Mode: "devdax"},
			Argv: append([]string{plnode, "server", "-delay-read-responses", readResponseDelay.String()}, args...)}
	}, "READY")
	defer server.Close()

	capture, err := w.Capture()
	require.NoError(t, err)
	client, out, _ := vmtest.Boot(t, p, mode+" client", roundTimeout, func(stdout io.Writer) vm.Node {
		return vm.Node{Index: 1, Wire: w, Stdout: stdout, Stderr: vmtest.LogWriter(t, mode+" client stderr"),
			Argv: append([]string{plnode, "client", "-mode", mode, "-peer", vm.NodeIP(0), "-ack-to-server", "-exit-when-done"}, args...)}
	}, "ROUND ")
	defer client.Close()
	acked := 0
	for !strings.HasPrefix(out.Next(t, roundTimeout, "ACK ", "DONE "), "DONE ") {
		acked++
	}
	out.Next(t, time.Minute, "FINISHED")
	frames, err := capture.Stop()
	require.NoError(t, err)

	sent := make([]Sent, len(frames))
	for i, f := range frames {
		sent[i] = Sent{FromClient: f.From == 1, Frame: f.Data}
	}
	r, err := CheckFlushOrder(sent)
	require.NoError(t, err)
	t.Logf("%s: %d frames, %d record writes, %d READ responses, %d acknowledgements (%d printed): %d covered by a flush in time, %d not",
		mode, len(frames), r.Records, r.ReadResponses, r.Acks, acked, r.Covered, r.Violations)
	for _, e := range r.Examples {
		t.Logf("%s: %s", mode, e)
	}
	require.Equal(t, wireRecords, acked, "%s: every record acknowledged", mode)
	require.GreaterOrEqual(t, r.Acks, acked, "%s: every acknowledgement crossed the wire", mode)
	require.GreaterOrEqual(t, r.Records, wireRecords, "%s: every record crossed the wire", mode)
	return r
}

// TestFlushOnTheWire checks on the wire itself what the power-loss test
// cannot see on rxe (where a write is placed before its ACK and the
// NVDIMM has no cache, so acknowledging without a flush loses nothing):
// that the client acknowledges a record only after a flush covering it
// came back from the server. It fails for a client that does not flush,
// and for one that flushes but acknowledges on the write's completion.
func TestFlushOnTheWire(t *testing.T) {
	plnode := buildPlnode(t)
	p, err := vm.Prepare(vm.Config{Log: os.Stderr, Timeout: 10 * time.Minute})
	require.NoError(t, err)

	r := flushOnTheWire(t, p, plnode, "ack-on-flush")
	require.Zero(t, r.Violations, "a record was acknowledged before a flush covering it left the server")
	require.Equal(t, r.Acks, r.Covered)
	require.Positive(t, r.ReadResponses)

	// Negative controls: both must be caught.
	r = flushOnTheWire(t, p, plnode, "ack-on-write")
	require.Positive(t, r.Violations, "a client that never flushes was not caught")
	require.Zero(t, r.ReadResponses, "ack-on-write posts no flush")
	r = flushOnTheWire(t, p, plnode, "ack-on-write-flushed")
	require.Positive(t, r.Violations, "a client that acknowledges on the write's completion was not caught")
	require.Positive(t, r.ReadResponses, "ack-on-write-flushed posts its flushes")
}
