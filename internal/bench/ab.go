package bench

import (
	"fmt"
	"io"
	"path/filepath"
)

// AB holds an A/B run of scripts/bench-ab.sh: conn's benchmarks built at
// a base revision (A) and with a change (B), and librpma's rpma_lat (C),
// run in rotating order in one VM, a "# round N" line before each
// program's output of round N.
type AB struct {
	A, B, C Set
}

// LoadAB reads an A/B run's outputs from dir (a.txt, b.txt, c.txt).
func LoadAB(dir string) (AB, error) {
	var ab AB
	for _, f := range []struct {
		name string
		set  *Set
	}{{"a.txt", &ab.A}, {"b.txt", &ab.B}, {"c.txt", &ab.C}} {
		var err error
		if *f.set, err = parseFile(filepath.Join(dir, f.name)); err != nil {
			return AB{}, err
		}
	}
	return ab, nil
}

// ABRow compares one operation (a row of Rows): B over A, with the rounds
// in which B's mean was the lower, and each over librpma, all medians of
// per-round ratios of the means (ns/op).
type ABRow struct {
	Row            Row
	BOverA         Ratio
	BFaster        int
	AOverC, BOverC Ratio
}

// Table returns the rows that both builds measured.
func (ab AB) Table() []ABRow {
	var rows []ABRow
	for _, row := range Rows {
		ratios := pairedRatios(ab.B, row.Go, ab.A, row.Go, "ns/op")
		if len(ratios) == 0 {
			continue
		}
		faster := 0
		for _, r := range ratios {
			if r < 1 {
				faster++
			}
		}
		rows = append(rows, ABRow{
			Row:     row,
			BOverA:  ratioOf(ratios),
			BFaster: faster,
			AOverC:  Paired(ab.A, row.Go, ab.C, row.C, "ns/op"),
			BOverC:  Paired(ab.B, row.Go, ab.C, row.C, "ns/op"),
		})
	}
	return rows
}

// Write writes Table as a Markdown table and returns how many rows it
// has.
func (ab AB) Write(w io.Writer) int {
	fmt.Fprintln(w, "| operation | B/A | rounds B faster | spread | A/librpma | B/librpma |")
	fmt.Fprintln(w, "|---|---:|---:|---|---:|---:|")
	rows := ab.Table()
	for _, r := range rows {
		fmt.Fprintf(w, "| %s | %s | %d of %d | %s | %s | %s |\n", shortName(r.Row.Go),
			fmtRatio(r.BOverA.Median, 1), r.BFaster, r.BOverA.N, fmtSpread(r.BOverA),
			fmtRatio(r.AOverC.Median, 1), fmtRatio(r.BOverC.Median, 1))
	}
	return len(rows)
}
