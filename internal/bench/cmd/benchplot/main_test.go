package main

import (
	"bytes"
	"fmt"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gorpma/rpma/internal/bench"
)

// fixture writes two rounds of every benchmark (C a bit faster), but
// leaves C's Read/1MiB/QD16 out: a missing point must not break a plot.
func fixture(t *testing.T) []bench.Round {
	t.Helper()
	dir := t.TempDir()
	for r := 1; r <= 2; r++ {
		var g, c strings.Builder
		for i, name := range bench.BandwidthNames() {
			mbs := 10 + float64(i+r)
			fmt.Fprintf(&g, "%s-2 8 1000 ns/op %.2f MB/s 0 B/op 0 allocs/op\n", name, mbs)
			if !strings.HasSuffix(name, "Read/1MiB/QD16") {
				fmt.Fprintf(&c, "%s\t8\t900 ns/op\t%.2f MB/s\n", name, mbs*1.1)
			}
		}
		for i, name := range bench.LatencySizeNames() {
			ns := 20000 * float64(i%7+1) * float64(i%7+1)
			fmt.Fprintf(&g, "%s-2 100 %.0f ns/op 1 MB/s %.0f p50-ns 1 p99-ns\n", name, ns, ns)
			fmt.Fprintf(&c, "%s\t100\t%.0f ns/op\t1 MB/s\t%.0f p50-ns\t1 p99-ns\n", name, ns*0.9, ns*0.9)
		}
		require.NoError(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("go-%02d.txt", r)), []byte(g.String()), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("c-%02d.txt", r)), []byte(c.String()), 0o644))
	}
	rounds, err := bench.LoadRounds(dir)
	require.NoError(t, err)
	require.Len(t, rounds, 2)
	return rounds
}

func checkPNG(t *testing.T, file string, minW, minH int) []byte {
	t.Helper()
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	img, err := png.Decode(bytes.NewReader(b))
	require.NoError(t, err, file)
	require.GreaterOrEqual(t, img.Bounds().Dx(), minW, file)
	require.GreaterOrEqual(t, img.Bounds().Dy(), minH, file)
	return b
}

// TestPlots renders both plots from the fixture, checks that valid PNGs
// of the expected size came out, and that rendering is deterministic.
func TestPlots(t *testing.T) {
	rounds := fixture(t)
	dir := t.TempDir()
	var first [2][]byte
	for i := 0; i < 2; i++ {
		lat := filepath.Join(dir, fmt.Sprintf("lat-%d.png", i))
		bw := filepath.Join(dir, fmt.Sprintf("bw-%d.png", i))
		require.NoError(t, latencyPlot(rounds, "kernel 6.1", lat))
		require.NoError(t, bandwidthPlot(rounds, "kernel 6.1", bw))
		// vgimg's default is 72 dpi: 24 cm × 10 cm and 27 cm × 16 cm.
		l := checkPNG(t, lat, 600, 250)
		b := checkPNG(t, bw, 700, 400)
		if i == 0 {
			first = [2][]byte{l, b}
		} else {
			require.Equal(t, first[0], l, "latency plot differs between renderings")
			require.Equal(t, first[1], b, "bandwidth plot differs between renderings")
		}
	}
}
