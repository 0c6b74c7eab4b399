package main

import (
	"slices"
	"time"
)

// summary is the distribution of a run's latencies.
type summary struct {
	n                        int
	min, p50, p99, p999, max time.Duration
}

// summarize sorts lat (nanoseconds, in place) and takes its percentiles.
func summarize(lat []int64) summary {
	if len(lat) == 0 {
		return summary{}
	}
	slices.Sort(lat)
	at := func(perMille int) time.Duration { return time.Duration(lat[rank(len(lat), perMille)]) }
	return summary{
		n:    len(lat),
		min:  time.Duration(lat[0]),
		p50:  at(500),
		p99:  at(990),
		p999: at(999),
		max:  time.Duration(lat[len(lat)-1]),
	}
}

// rank is the index of the perMille-th per mille of n sorted values, by
// the nearest rank: the smallest value that at least perMille/1000 of the
// values do not exceed (integer arithmetic: no rounding surprises).
func rank(n, perMille int) int {
	r := (perMille*n + 999) / 1000
	return min(max(r-1, 0), n-1)
}
