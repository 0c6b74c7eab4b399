// Command benchplot turns one kernel's scripts/bench-bw.sh rounds into
// Markdown tables and PNG plots (doc/performance.md):
//
//	benchplot [-tables] [-latency FILE.png] [-bandwidth FILE.png] [-title T] DIR
//
// DIR holds go-NN.txt and c-NN.txt, one pair per round (see
// bench.LoadRounds). -tables prints the bandwidth and latency tables
// (bench.WriteBWTables); -latency draws the latency against message size
// (log-log, Write and Read panels, Go and C lines: the median over the
// rounds of each round's mean); -bandwidth draws the bandwidth against
// queue depth (one panel per kernel and size, Go and C lines: the median
// MB/s). The exit status is 1 when a benchmark is missing from every
// round of a side (what is there is still printed and drawn).
//
//	benchplot -wakeups DIR
//
// prints the goroutine wake-ups per operation of conn's
// BenchmarkGoroutines runs from their execution traces in DIR
// (scripts/bench-goroutines.sh with BENCH_WAKEUPS=1; wakeups.go).
package main

import (
	"flag"
	"fmt"
	"math"
	"os"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/gorpma/rpma/internal/bench"
)

func main() {
	tables := flag.Bool("tables", false, "print the Markdown tables")
	lat := flag.String("latency", "", "write the latency-vs-size plot to this PNG file")
	bw := flag.String("bandwidth", "", "write the bandwidth-vs-queue-depth plot to this PNG file")
	title := flag.String("title", "", "a title prefix for the plots (e.g. the kernel)")
	wake := flag.Bool("wakeups", false, "print the goroutine wake-ups of the traces in DIR (BenchmarkGoroutines' NAME-NOPS.trace)")
	flag.Parse()
	if *wake && flag.NArg() == 1 {
		if err := writeWakeups(os.Stdout, flag.Arg(0)); err != nil {
			fail(err)
		}
		return
	}
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: benchplot [-tables] [-latency FILE.png] [-bandwidth FILE.png] [-title T] DIR")
		os.Exit(2)
	}
	rounds, err := bench.LoadRounds(flag.Arg(0))
	if err != nil {
		fail(err)
	}
	if *tables {
		bench.WriteBWTables(os.Stdout, rounds)
	}
	if *lat != "" {
		if err := latencyPlot(rounds, *title, *lat); err != nil {
			fail(err)
		}
	}
	if *bw != "" {
		if err := bandwidthPlot(rounds, *title, *bw); err != nil {
			fail(err)
		}
	}
	if miss := bench.MissingBW(rounds); len(miss) > 0 {
		for _, m := range miss {
			fmt.Fprintln(os.Stderr, "benchplot: missing:", m)
		}
		os.Exit(1)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "benchplot:", err)
	os.Exit(1)
}

// points are the (x, median) pairs of rows whose side has a value; pick
// chooses the side.
func points(xs []float64, rows []bench.BWRow, scale float64, pick func(bench.BWRow) float64) plotter.XYs {
	var p plotter.XYs
	for i, r := range rows {
		if v := pick(r); !math.IsNaN(v) && v > 0 {
			p = append(p, plotter.XY{X: xs[i], Y: v * scale})
		}
	}
	return p
}

func goMed(r bench.BWRow) float64 { return r.GoMed }
func cMed(r bench.BWRow) float64  { return r.CMed }

// addLines adds the Go and the C line, with their markers (plotutil's
// fixed order of colours and shapes keeps the output deterministic).
func addLines(p *plot.Plot, g, c plotter.XYs) error {
	var vs []any
	if len(g) > 0 {
		vs = append(vs, "Go", g)
	}
	if len(c) > 0 {
		vs = append(vs, "C librpma", c)
	}
	if len(vs) == 0 {
		return nil
	}
	return plotutil.AddLinePoints(p, vs...)
}

// save draws the panels (rows × cols) on one w × h PNG.
func save(panels [][]*plot.Plot, w, h vg.Length, file string) error {
	img := vgimg.New(w, h)
	dc := draw.New(img)
	t := draw.Tiles{Rows: len(panels), Cols: len(panels[0]), PadX: vg.Millimeter * 4, PadY: vg.Millimeter * 4,
		PadTop: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2, PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 2}
	cs := plot.Align(panels, t, dc)
	for i, row := range panels {
		for j, p := range row {
			p.Draw(cs[i][j])
		}
	}
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func titled(prefix, s string) string {
	if prefix == "" {
		return s
	}
	return prefix + ": " + s
}

// latencyPlot: one log-log panel per kernel (Write, Read), latency in µs
// against the message size in bytes.
func latencyPlot(rounds []bench.Round, title, file string) error {
	xs := make([]float64, len(bench.LatBytes))
	var ticks []plot.Tick
	for i, b := range bench.LatBytes {
		xs[i] = float64(b)
		ticks = append(ticks, plot.Tick{Value: float64(b), Label: bench.LatSizes[i]})
	}
	var row []*plot.Plot
	for _, k := range bench.BWKernels {
		var names []string
		for _, s := range bench.LatSizes {
			names = append(names, "BenchmarkLatencySize/"+k+"/"+s)
		}
		rows := bench.CompareBW(rounds, names, "ns/op")
		p := plot.New()
		p.Title.Text = titled(title, k+" latency, queue depth 1")
		p.X.Label.Text = "message size"
		p.Y.Label.Text = "µs (median of means)"
		p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
		p.X.Tick.Marker = plot.ConstantTicks(ticks)
		p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
		p.Legend.Top, p.Legend.Left = false, false
		p.Add(plotter.NewGrid())
		if err := addLines(p, points(xs, rows, 1e-3, goMed), points(xs, rows, 1e-3, cMed)); err != nil {
			return err
		}
		row = append(row, p)
	}
	return save([][]*plot.Plot{row}, 24*vg.Centimeter, 10*vg.Centimeter, file)
}

// bandwidthPlot: one panel per kernel (rows) and size (columns), MB/s
// against the queue depth (log scale: 1, 4, 16).
func bandwidthPlot(rounds []bench.Round, title, file string) error {
	xs := make([]float64, len(bench.BWDepths))
	var ticks []plot.Tick
	for i, qd := range bench.BWDepths {
		xs[i] = float64(qd)
		ticks = append(ticks, plot.Tick{Value: float64(qd), Label: fmt.Sprint(qd)})
	}
	var panels [][]*plot.Plot
	for _, k := range bench.BWKernels {
		var row []*plot.Plot
		for _, s := range bench.BWSizes {
			var names []string
			for _, qd := range bench.BWDepths {
				names = append(names, fmt.Sprintf("BenchmarkBandwidth/%s/%s/QD%d", k, s, qd))
			}
			rows := bench.CompareBW(rounds, names, "MB/s")
			p := plot.New()
			p.Title.Text = titled(title, k+" "+s)
			p.X.Label.Text = "queue depth"
			p.Y.Label.Text = "MB/s"
			p.X.Scale = plot.LogScale{}
			p.X.Tick.Marker = plot.ConstantTicks(ticks)
			p.X.Min, p.X.Max = 0.8, 20
			p.Y.Min = 0
			p.Legend.Top, p.Legend.Left = false, true
			p.Add(plotter.NewGrid())
			if err := addLines(p, points(xs, rows, 1, goMed), points(xs, rows, 1, cMed)); err != nil {
				return err
			}
			row = append(row, p)
		}
		panels = append(panels, row)
	}
	return save(panels, 27*vg.Centimeter, 16*vg.Centimeter, file)
}
