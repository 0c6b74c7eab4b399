package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"
)

// result is one line of output: a measured (operation, size).
type result struct {
	Op         string  `json:"op"`
	Size       int     `json:"size"`
	Depth      int     `json:"depth"`
	Goroutines int     `json:"goroutines"`
	Conns      int     `json:"conns"`
	Mode       string  `json:"mode"`
	Iters      int     `json:"iters"`
	MinUS      float64 `json:"min_us"`
	P50US      float64 `json:"p50_us"`
	P99US      float64 `json:"p99_us"`
	P999US     float64 `json:"p999_us"`
	MaxUS      float64 `json:"max_us"`
	MBPerS     float64 `json:"mb_per_s"`
	Mops       float64 `json:"mops"`
	Bytes      int64   `json:"bytes"`
	Seconds    float64 `json:"seconds"`
}

// result sums a run up: its latencies (ns) over elapsed.
func (m *measurement) result(lat []int64, elapsed time.Duration) result {
	s := summarize(lat)
	bytes := int64(s.n) * int64(m.size)
	sec := elapsed.Seconds()
	return result{
		Op:         m.op.String(),
		Size:       m.size,
		Depth:      m.cfg.depth,
		Goroutines: m.cfg.goroutines,
		Conns:      m.cfg.conns,
		Mode:       string(m.cfg.mode),
		Iters:      s.n,
		MinUS:      us(s.min),
		P50US:      us(s.p50),
		P99US:      us(s.p99),
		P999US:     us(s.p999),
		MaxUS:      us(s.max),
		MBPerS:     float64(bytes) / sec / 1e6,
		Mops:       float64(s.n) / sec / 1e6,
		Bytes:      bytes,
		Seconds:    sec,
	}
}

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

// reporter prints results as a perftest-style table, or as JSON lines.
type reporter struct {
	w      io.Writer
	cfg    *config
	header bool
}

func newReporter(cfg *config, w io.Writer) *reporter { return &reporter{w: w, cfg: cfg} }

const rule = "------------------------------------------------------------------------------------------------------------------------------------------"

func (r *reporter) print(res result) error {
	if r.cfg.json {
		b, err := json.Marshal(res)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(r.w, "%s\n", b)
		return err
	}
	var sb strings.Builder
	if !r.header {
		r.header = true
		fmt.Fprintf(&sb, "%s\n rpmaperf  mode %s  depth %d  goroutines %d  conns %d  server %s port %s\n%s\n",
			rule, r.cfg.mode, r.cfg.depth, r.cfg.goroutines, r.cfg.conns, r.cfg.addr, r.cfg.port, rule)
		fmt.Fprintf(&sb, " %-22s %10s %12s %12s %16s %11s %13s %12s %11s %14s %14s\n",
			"#op", "#bytes", "#iterations", "t_min[usec]", "t_typical[usec]", "t_99[usec]", "t_99.9[usec]",
			"t_max[usec]", "BW[MB/s]", "MsgRate[Mpps]", "#bytes_moved")
	}
	fmt.Fprintf(&sb, " %-22s %10d %12d %12.2f %16.2f %11.2f %13.2f %12.2f %11.2f %14.6f %14d\n",
		res.Op, res.Size, res.Iters, res.MinUS, res.P50US, res.P99US, res.P999US, res.MaxUS, res.MBPerS, res.Mops, res.Bytes)
	_, err := io.WriteString(r.w, sb.String())
	return err
}
