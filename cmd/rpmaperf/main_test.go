package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gorpma/rpma/internal/leak"
)

// helperEnv, set to "1", makes the test binary run rpmaperf with its
// arguments instead of the tests (a test's second process).
const helperEnv = "RPMAPERF_TEST_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) == "1" {
		os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
	}
	leak.Main(m)
}

// rpmaperfCmd is rpmaperf with args, run by the test binary itself.
func rpmaperfCmd(args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), helperEnv+"=1")
	return cmd
}

// TestBadUsageExits2: every bad flag or value exits with status 2 and one
// line on stderr that says what is wrong and points to -h.
func TestBadUsageExits2(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-addr", "x", "-op", "nope"}, `unknown operation "nope"`},
		{[]string{"-addr", "x", "-op", "write,"}, `unknown operation ""`},
		{[]string{"-addr", "x", "-size", "0"}, `-size "0"`},
		{[]string{"-addr", "x", "-size", "64,-1"}, `-size "-1"`},
		{[]string{"-addr", "x", "-size", "2G"}, `-size "2G"`},
		{[]string{"-addr", "x", "-depth", "-1"}, "-depth -1"},
		{[]string{"-addr", "x", "-depth", "0"}, "-depth 0"},
		{[]string{"-addr", "x", "-iters", "0"}, "-iters 0"},
		{[]string{"-addr", "x", "-iters", "5", "-duration", "1s"}, "exclude each other"},
		{[]string{"-addr", "x", "-duration", "-1s"}, "-duration -1s"},
		{[]string{"-addr", "x", "-goroutines", "0"}, "-goroutines 0"},
		{[]string{"-addr", "x", "-goroutines", "2"}, "needs -mode event"},
		{[]string{"-addr", "x", "-mode", "event", "-goroutines", "64", "-depth", "8"}, "at most 256"},
		{[]string{"-addr", "x", "-conns", "0"}, "-conns 0"},
		{[]string{"-addr", "x", "-mode", "spin"}, `-mode "spin"`},
		{[]string{"-addr", "x", "-timeout", "1ms"}, "-timeout 1ms"},
		{[]string{"-addr", "x", "-port", "0"}, `-port "0"`},
		{[]string{"-addr", "x", "-port", "70000"}, `-port "70000"`},
		{[]string{"-addr", "x", "-size", "512M", "-depth", "4"}, "needs"},
		{[]string{"-op", "write"}, "-addr is required"},
		{[]string{"-addr", "x", "-bogus"}, "flag provided but not defined: -bogus"},
		{[]string{"-addr", "x", "-depth", "many"}, `invalid value "many" for flag -depth`},
		{[]string{"-addr", "x", "extra"}, `unexpected argument "extra"`},
		{[]string{"-server"}, "-addr is required"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var out, errb bytes.Buffer
			require.Equal(t, exitUsage, run(tc.args, &out, &errb))
			require.Empty(t, out.String())
			msg := errb.String()
			require.Equal(t, 1, strings.Count(msg, "\n"), msg)
			require.Contains(t, msg, tc.want)
			require.True(t, strings.HasPrefix(msg, "rpmaperf: ") && strings.HasSuffix(msg, "(rpmaperf -h for usage)\n"), msg)
		})
	}
}

// TestProcessExitStatus: the binary's exit status is run's (2 for usage,
// 0 for -h, whose text lists every operation and flag).
func TestProcessExitStatus(t *testing.T) {
	var errb bytes.Buffer
	cmd := rpmaperfCmd("-addr", "192.0.2.1", "-op", "bogus")
	cmd.Stderr = &errb
	err := cmd.Run()
	var ee *exec.ExitError
	require.True(t, errors.As(err, &ee), "%v", err)
	require.Equal(t, exitUsage, ee.ExitCode())
	require.Equal(t, 1, strings.Count(errb.String(), "\n"), errb.String())

	out, err := rpmaperfCmd("-h").Output()
	require.NoError(t, err)
	for _, name := range append(opNames(), "all") {
		require.Contains(t, string(out), name)
	}
	fs := newFlagSet(&config{}, new(string), new(string))
	fs.VisitAll(func(f *flag.Flag) { require.Contains(t, string(out), "-"+f.Name) })
}

func TestParseArgs(t *testing.T) {
	c, err := parseArgs([]string{"-addr", "192.0.2.1", "-op", "read,cas,read", "-size", "64,4k,1M,64", "-mode", "event",
		"-goroutines", "4", "-depth", "2", "-duration", "2s", "-json", "-check"})
	require.NoError(t, err)
	require.Equal(t, []op{opRead, opCAS}, c.ops)
	require.Equal(t, []int{64, 4096, 1 << 20}, c.sizes)
	require.Equal(t, 8, c.lanes())
	require.Equal(t, 1<<20, c.maxSize())
	require.Equal(t, 2*time.Second, c.duration)
	require.False(t, c.hasSend())
	require.True(t, c.json && c.check)
	require.Equal(t, "7204", c.port)

	c, err = parseArgs([]string{"-addr", "192.0.2.1", "-op", "all", "-size", "4096"})
	require.NoError(t, err)
	require.Equal(t, allOps(), c.ops)
	require.True(t, c.hasSend())
	require.Equal(t, modeBusy, c.mode)

	c, err = parseArgs([]string{"-addr", "192.0.2.1", "-op", "cas,faa", "-size", "1G"})
	require.NoError(t, err)
	require.Equal(t, atomicSize, c.maxSize(), "atomics ignore -size")
	require.Equal(t, []int{atomicSize}, opCAS.sizesFor(c.sizes))

	c, err = parseArgs([]string{"-server", "-addr", "192.0.2.1", "-port", "0", "-forever"})
	require.NoError(t, err)
	require.True(t, c.server && c.forever && c.directPMem)

	_, err = parseArgs([]string{"-h"})
	require.ErrorIs(t, err, flag.ErrHelp)
}

func TestPercentiles(t *testing.T) {
	lat := make([]int64, 1000)
	for i := range lat {
		lat[i] = int64(1000 - i) // 1..1000 reversed: summarize sorts
	}
	s := summarize(lat)
	require.Equal(t, summary{n: 1000, min: 1, p50: 500, p99: 990, p999: 999, max: 1000}, s)

	s = summarize([]int64{7})
	require.Equal(t, summary{n: 1, min: 7, p50: 7, p99: 7, p999: 7, max: 7}, s)

	s = summarize([]int64{5, 1, 3, 2, 4}) // nearest rank: ceil(p*n)
	require.Equal(t, time.Duration(3), s.p50)
	require.Equal(t, time.Duration(5), s.p99)
	require.Equal(t, summary{}, summarize(nil))

	require.Equal(t, 0, rank(10, 0))
	require.Equal(t, 4, rank(10, 500))
	require.Equal(t, 9, rank(10, 990))
	require.Equal(t, 9989, rank(10000, 999))
}

func testResult() result {
	m := &measurement{cfg: &config{mode: modeEvent, depth: 2, goroutines: 4, conns: 1, addr: "192.0.2.1", port: "7204"}, op: opWrite, size: 4096}
	lat := make([]int64, 200)
	for i := range lat {
		lat[i] = int64(10*time.Microsecond) + int64(i)*int64(time.Microsecond)
	}
	return m.result(lat, 100*time.Millisecond)
}

func TestResult(t *testing.T) {
	r := testResult()
	require.Equal(t, 200, r.Iters)
	require.Equal(t, int64(200*4096), r.Bytes)
	require.InDelta(t, 10.0, r.MinUS, 1e-9)
	require.InDelta(t, 109.0, r.P50US, 1e-9)
	require.InDelta(t, 207.0, r.P99US, 1e-9)
	require.InDelta(t, 209.0, r.P999US, 1e-9)
	require.InDelta(t, 209.0, r.MaxUS, 1e-9)
	require.InDelta(t, 200*4096/0.1/1e6, r.MBPerS, 1e-9)
	require.InDelta(t, 200/0.1/1e6, r.Mops, 1e-12)
}

func TestTableAndJSON(t *testing.T) {
	r := testResult()
	var out bytes.Buffer
	rep := newReporter(&config{mode: modeEvent, depth: 2, goroutines: 4, conns: 1, addr: "192.0.2.1", port: "7204"}, &out)
	require.NoError(t, rep.print(r))
	require.NoError(t, rep.print(r))
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	require.Len(t, lines, 6, out.String()) // rule, settings, rule, header, two rows
	require.Contains(t, lines[1], "mode event  depth 2  goroutines 4  conns 1")
	require.Equal(t, []string{"#op", "#bytes", "#iterations", "t_min[usec]", "t_typical[usec]", "t_99[usec]",
		"t_99.9[usec]", "t_max[usec]", "BW[MB/s]", "MsgRate[Mpps]", "#bytes_moved"}, strings.Fields(lines[3]))
	require.Equal(t, []string{"write", "4096", "200", "10.00", "109.00", "207.00", "209.00", "209.00", "8.19", "0.002000", "819200"},
		strings.Fields(lines[4]))
	require.Equal(t, lines[4], lines[5])

	out.Reset()
	rep = newReporter(&config{json: true}, &out)
	require.NoError(t, rep.print(r))
	require.Equal(t, 1, strings.Count(out.String(), "\n"))
	var got map[string]any
	require.NoError(t, json.Unmarshal(out.Bytes(), &got))
	for _, k := range []string{"op", "size", "depth", "goroutines", "conns", "mode", "iters", "min_us", "p50_us",
		"p99_us", "p999_us", "max_us", "mb_per_s", "mops", "bytes"} {
		require.Contains(t, got, k)
	}
	require.Equal(t, "write", got["op"])
	require.Equal(t, "event", got["mode"])
	require.InDelta(t, 819200, got["bytes"], 0)
}

func TestProtocol(t *testing.T) {
	h := hello{conns: 3, lanes: 8, maxMsg: 4096, regionSize: 1 << 20}
	b := h.marshal()
	require.LessOrEqual(t, len(b), 56, "a connect carries at most 56 bytes")
	got, err := parseHello(b)
	require.NoError(t, err)
	require.Equal(t, h, got)
	_, err = parseHello([]byte("hello"))
	require.ErrorContains(t, err, "not an rpmaperf client")
	_, err = parseHello(hello{conns: 1, lanes: maxLanes + 1, regionSize: 1}.marshal())
	require.ErrorContains(t, err, "operations in flight")
	_, err = parseHello(hello{conns: 1, lanes: 1, regionSize: maxRegion + 1}.marshal())
	require.ErrorContains(t, err, "region")
	require.LessOrEqual(t, offerSize, 196)
	_, _, err = parseOffer(make([]byte, offerSize))
	require.ErrorContains(t, err, "not an rpmaperf server")

	l := newLayout(4, 100)
	require.Equal(t, 128, l.slot)
	require.Equal(t, 0, l.first(0))
	require.Equal(t, 512, l.second(0))
	require.Equal(t, 1024+8, l.word(1))
	require.Equal(t, 4096, l.size)
	require.Zero(t, l.word(3)%atomicSize)
}

func TestCheckHelpers(t *testing.T) {
	b := []byte{1, 2, 3}
	require.NoError(t, comparePattern(b, func(i int) byte { return byte(i + 1) }))
	require.ErrorContains(t, comparePattern(b, func(i int) byte { return byte(i * 2) }), "byte 0 of 3 is 0x01, want 0x00")

	st := &opState{lane: 1}
	require.NoError(t, st.casDone(41, true), "the first value is learned")
	require.Equal(t, uint64(41), st.compare)
	require.NoError(t, st.casDone(41, true))
	require.Equal(t, uint64(42), st.compare)
	require.ErrorContains(t, st.casDone(7, true), "cas on lane 1: the word held 7, want 42")

	st = &opState{}
	require.NoError(t, st.faaDone(10, true))
	require.NoError(t, st.faaDone(11, true))
	require.ErrorContains(t, st.faaDone(13, true), "want 12")
}
