//go:build linux

package examples_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gorpma/rpma/examples/internal/common/gpspm"
)

// TestGPSPMProtobufC checks byte for byte that our GPSPM messages
// (package gpspm, protobuf-go) are protobuf-c's: it builds
// testdata/librpma/gpspm-codec.c with the code protoc-c generated for the
// interop test's 09 programs (GPSPM_flush.pb-c.c, librpma's message
// definitions) and, for each message, compares protobuf-c's packed bytes
// with the Go encoder's, and has each side decode the other's bytes. Then
// both decoders get the same odd inputs (fields reordered, repeated or
// unknown, missing, truncated, padded) and must agree on what they accept
// and what they read. It needs cc and libprotobuf-c-dev (not librpma, no
// RDMA): on a host without them it skips, in the VM it fails.
func TestGPSPMProtobufC(t *testing.T) {
	var q gpspmQueries

	requests := [][3]uint64{
		{0, 1024, 0xF01D},     // what the 09 clients send to a DRAM server
		{0x11, 0x400, 0xF01D}, // ... to a PMem server (after the signature)
		{0, 0, 0},
		{1, 0x7F, 0x80},
		{0x0102030405060708, math.MaxUint64, 0x8000000000000001},
		{math.MaxUint64, math.MaxUint64, math.MaxUint64},
	}
	for _, r := range requests {
		goBytes, err := gpspm.EncodeRequest(r[0], r[1], r[2])
		require.NoError(t, err)
		require.Len(t, goBytes, gpspm.RequestSize)
		q.add(fmt.Sprintf("pack-request %d %d %d", r[0], r[1], r[2]), func(t *testing.T, ans string) {
			require.Equal(t, hex.EncodeToString(goBytes), ans, "request %v: Go's bytes, then protobuf-c's", r)
			cBytes, err := hex.DecodeString(ans)
			require.NoError(t, err)
			m, err := gpspm.DecodeRequest(cBytes)
			require.NoError(t, err, "Go decoding protobuf-c's request %x", cBytes)
			require.Equal(t, r, [3]uint64{m.GetOffset(), m.GetLength(), m.GetOpContext()})
		})
		q.add("unpack-request "+hexOrNone(goBytes), func(t *testing.T, ans string) {
			require.Equal(t, fmt.Sprintf("%d %d %d", r[0], r[1], r[2]), ans, "protobuf-c decoding Go's request %x", goBytes)
		})
	}

	for _, c := range []uint64{0xF01D, 0, 1, 1 << 63, math.MaxUint64} {
		goBytes, err := gpspm.EncodeResponse(c)
		require.NoError(t, err)
		require.Len(t, goBytes, gpspm.ResponseSize)
		q.add(fmt.Sprintf("pack-response %d", c), func(t *testing.T, ans string) {
			require.Equal(t, hex.EncodeToString(goBytes), ans, "response %#x: Go's bytes, then protobuf-c's", c)
			cBytes, err := hex.DecodeString(ans)
			require.NoError(t, err)
			m, err := gpspm.DecodeResponse(cBytes)
			require.NoError(t, err, "Go decoding protobuf-c's response %x", cBytes)
			require.Equal(t, c, m.GetOpContext())
		})
		q.add("unpack-response "+hexOrNone(goBytes), func(t *testing.T, ans string) {
			require.Equal(t, fmt.Sprint(c), ans, "protobuf-c decoding Go's response %x", goBytes)
		})
	}

	// The decoders agree on inputs no encoder of ours makes.
	f := func(tag byte, v uint64) []byte { // a fixed64 field
		return binary.LittleEndian.AppendUint64([]byte{tag}, v)
	}
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	valid := cat(f(0x09, 1), f(0x11, 2), f(0x19, 3))
	odd := []struct {
		name string
		b    []byte
	}{
		{"reordered", cat(f(0x19, 3), f(0x11, 2), f(0x09, 1))},
		{"repeated field", cat(valid, f(0x09, 7))},
		{"unknown varint", cat(valid, []byte{0x20, 0x05})},
		{"unknown fixed64", cat(f(0x21, 9), valid)},
		{"missing op_context", valid[:18]},
		{"only offset", valid[:9]},
		{"empty", nil},
		{"truncated", valid[:26]},
		{"padded to a slot", cat(valid, make([]byte, gpspm.MsgSizeMax-len(valid)))},
		{"one zero byte after", cat(valid, []byte{0})},
		{"varint for offset", cat([]byte{0x08, 0x01}, valid[9:])},
		{"a request", valid}, // as a response: field 1, then unknown 2 and 3
	}
	for _, o := range odd {
		goReq, goReqErr := gpspm.DecodeRequest(o.b)
		want := "error"
		if goReqErr == nil {
			want = fmt.Sprintf("%d %d %d", goReq.GetOffset(), goReq.GetLength(), goReq.GetOpContext())
		}
		q.add("unpack-request "+hexOrNone(o.b), func(t *testing.T, ans string) {
			require.Equal(t, want, ans, "%s: Go's request decoding (%v), then protobuf-c's", o.name, goReqErr)
		})

		goResp, goRespErr := gpspm.DecodeResponse(o.b)
		wantResp := "error"
		if goRespErr == nil {
			wantResp = fmt.Sprint(goResp.GetOpContext())
		}
		q.add("unpack-response "+hexOrNone(o.b), func(t *testing.T, ans string) {
			require.Equal(t, wantResp, ans, "%s: Go's response decoding (%v), then protobuf-c's", o.name, goRespErr)
		})
	}

	q.run(t)
}

func hexOrNone(b []byte) string {
	if len(b) == 0 {
		return "-"
	}
	return hex.EncodeToString(b)
}

// gpspmQueries are commands for gpspm-codec, each with a check of its
// answer.
type gpspmQueries struct {
	cmds   []string
	checks []func(t *testing.T, answer string)
}

func (q *gpspmQueries) add(cmd string, check func(t *testing.T, answer string)) {
	q.cmds = append(q.cmds, cmd)
	q.checks = append(q.checks, check)
}

// run builds testdata/librpma/gpspm-codec.c with the generated protobuf-c
// code, feeds it every command at once and checks each answer line.
func (q *gpspmQueries) run(t *testing.T) {
	t.Helper()
	cc := requireCC(t, "libprotobuf-c-dev")
	ctx, cancel := context.WithTimeout(context.Background(), interopBuildTimeout)
	defer cancel()
	bin, _, err := compileC(ctx, cc, t.TempDir(), "gpspm-codec", []string{"gpspm-codec.c", "GPSPM_flush.pb-c.c"}, []string{"-lprotobuf-c"})
	require.NoError(t, err)

	cmd := exec.CommandContext(ctx, bin)
	cmd.Stdin = strings.NewReader(strings.Join(q.cmds, "\n") + "\n")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "gpspm-codec: %s", stderr.String())
	answers := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	require.Len(t, answers, len(q.cmds), "gpspm-codec's answers: %q", answers)
	for i, ans := range answers {
		q.checks[i](t, ans)
	}
	t.Logf("protobuf-c and Go agree on %d commands", len(answers))
}
