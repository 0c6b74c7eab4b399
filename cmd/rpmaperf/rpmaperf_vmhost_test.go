//go:build linux && vmhost

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestTwoNodes runs rpmaperf across the virtual wire between two VMs
// (node 0 the server, node 1 the client): write, flush-persistent and send,
// with -json and -check.
func TestTwoNodes(t *testing.T) {
	dir := t.TempDir()
	bin, rxevm := filepath.Join(dir, "rpmaperf"), filepath.Join(dir, "rxevm")
	for _, b := range [][2]string{{bin, "."}, {rxevm, "../rxevm"}} {
		out, err := exec.Command("go", "build", "-o", b[0], b[1]).CombinedOutput()
		require.NoError(t, err, string(out))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	// Both start at once: the client waits for the server's "listening"
	// line in a file both VMs see (the host's, over 9p).
	listening := filepath.Join(dir, "server.out")
	cmd := exec.CommandContext(ctx, rxevm, "-nodes", "2", "--",
		"sh", "-c", bin+` -server -addr "$RPMA_TEST_IP" -timeout 20s >`+listening,
		"::",
		"sh", "-c", `until grep -q listening `+listening+` 2>/dev/null; do sleep 0.2; done; `+
			bin+` -addr "$RPMA_TEST_PEER_IP" -op write,flush-persistent,send -size 64,4096 -iters 200 -json -check -timeout 20s`)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	err := cmd.Run()
	t.Logf("rxevm -nodes 2: %v in %.1fs\n%s", err, time.Since(start).Seconds(), out.String())
	require.NoError(t, err, errb.String())

	var ops []string
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var r result
		require.NoError(t, json.Unmarshal([]byte(line), &r), line)
		ops = append(ops, r.Op)
		require.Equal(t, 200, r.Iters, line)
		require.Equal(t, int64(200*r.Size), r.Bytes, line)
		require.Positive(t, r.MinUS, line)
		require.LessOrEqual(t, r.MinUS, r.P50US, line)
		require.LessOrEqual(t, r.P50US, r.P99US, line)
		require.LessOrEqual(t, r.P99US, r.P999US, line)
		require.LessOrEqual(t, r.P999US, r.MaxUS, line)
		require.Positive(t, r.MBPerS, line)
		require.Positive(t, r.Mops, line)
	}
	require.Equal(t, []string{"write", "write", "flush-persistent", "flush-persistent", "send", "send"}, ops)
}
