package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
)

// Round is one round of a script that runs a Go benchmark and its C
// counterpart in alternation, one pair of output files a round:
// go-R.txt and c-R.txt (scripts/bench-bw.sh, scripts/bench-scale.sh).
type Round struct {
	N     int // the round's number
	Go, C Set // nil: that side's file is missing
}

var roundFile = regexp.MustCompile(`^(go|c)-(\d+)\.txt$`)

// LoadRounds reads the rounds of dir, in order of their numbers (R may
// have leading zeros). A round with only one side's file is kept: its
// benchmarks are then not paired.
func LoadRounds(dir string) ([]Round, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	byN := map[int]*Round{}
	for _, e := range ents {
		m := roundFile.FindStringSubmatch(e.Name())
		if m == nil {
			continue
		}
		n, _ := strconv.Atoi(m[2])
		set, err := parseFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", e.Name(), err)
		}
		r := byN[n]
		if r == nil {
			r = &Round{N: n}
			byN[n] = r
		}
		if m[1] == "go" {
			r.Go = set
		} else {
			r.C = set
		}
	}
	var rounds []Round
	for _, r := range byN {
		rounds = append(rounds, *r)
	}
	sort.Slice(rounds, func(i, j int) bool { return rounds[i].N < rounds[j].N })
	return rounds, nil
}
