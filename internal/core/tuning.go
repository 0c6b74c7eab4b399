package core

import "time"

// The data path's tuning: the thresholds of its six adaptive heuristics,
// each with the reason and the figure that chose it, and the switches that
// turn five of them, and submission combining, off for benchmarks and
// tests (Tuning). All were chosen on Soft-RoCE under qemu's TCG; where a
// figure would differ on a NIC, the heuristic backs off by itself
// (reaping, the fast path) or costs nothing there (the gate, the yield).
// The figures are in doc/notes/performance-lab-notes.md under the
// sections named.

// Reaping on post (cq.go, CQ.reapRoom): a post polls its CQ in the same
// crossing. On 6.1's loopback rxe completes before the post returns, so
// the reap finds the completion and GetWC needs no crossing; on a wire or
// a NIC it finds nothing. After reapIdleMax empty reaps in a row only
// every reapEvery-th post reaps, so that a change back to quick
// completions is noticed within reapEvery posts; a reap takes at most
// reapMax completions, the stash's share one post may fill. On the
// two-node wire ("Two nodes: completions from the wire", 2026-12-02) 180
// and 200 of 4,400 posts reaped (4.1% and 4.5%), 1 and 7 of those reaps
// found a completion; the empty reaps add about 2 ns per post on
// hardware (0.1%).
const (
	reapIdleMax = 4
	reapEvery   = 32
	reapMax     = 16
)

// The busy poller's yield (yield.go): every yieldPeriod of wall-clock
// time per connection, under sysmon's 10 ms preemption. 1.5 ms is what 4
// million TSC counts were on the 2.6 GHz guest where the period was tuned
// ("The period again (2026-12-04)": 8 and 16 million counts against 4
// million, 45 rounds each, differed by less than the host's round-to-round
// spread; without the yield, Go's p99 was 2-3 times librpma's, "The
// preemption tail"). yieldGuess is the period in counts until the
// counter's rate is measured.
const (
	yieldPeriod = 1500 * time.Microsecond
	yieldGuess  = 4_000_000
)

// The gate (gate.go): a completion channel leaves the waiter's epoll
// instance after gateIdleMax events in a row were read without a park
// ("Event mode: completion events and the poller's thread": gated
// Write64Wait 0.79 of always watched, 11 rounds). Four lets a loop that
// parks now and then keep its channel watched.
const gateIdleMax = 4

// The fast path's skip (waiter.go, fastDue): a completion wait first tries
// to read an event without parking, one system call, except after
// sleepsMax parks in a row that slept (completions that come after the
// wait began: a wire, a NIC, rxe on 6.12), where the park's first look
// does the same work ("Event mode: completion events and the poller's
// thread": the fast path's read and write, 2.69-2.90 system calls per
// operation to 1.84-1.88).
const sleepsMax = 4

// The waiting calls' turn-taking (opwait.go, runWait) has no threshold:
// a per-operation call that returns while other such calls are in
// progress on its CQ yields (gosched) before it returns. Where operations
// complete inside their post (6.1's loopback rxe; any device when the
// completion is already there), no call ever parks, and without the
// yield a goroutine looping on calls keeps its P until the busy poller's
// yield (every yieldPeriod) or sysmon's 10 ms preemption, while the
// others wait: BenchmarkGoroutines/Write64/G=64 on 6.1 measured a p50 of
// 33 us and a p99.9 of 95 ms without it, 6.1 ms and 27 ms with it, at
// the same throughput (102 and 104 us per operation; doc/goroutines.md).
// A call counts as in progress until after its yield, so that goroutines
// that take turns keep seeing each other. A call that parked was already
// descheduled; its yield costs one trip through the scheduler. One
// goroutine alone never yields (TestFakeWaitingCallsTakeTurns).
//
// Submission combining (combine.go) has no threshold either: a waiting
// call that starts while others are in progress takes its turn before
// its post instead of after its completion, its request on the
// connection's combining list, and the first caller back posts the list
// as chains of what fits (Tuning.NoCombine turns it off). Counted on
// 6.1, BenchmarkGoroutines/Write64/G=16 went from 1.0 to 0.19 cgo
// crossings and from 17,431 to 15,103 instructions per operation, G=1
// stayed at 17,015-17,020 (doc/goroutines.md). Its caller takes no
// periodic yield (yield.go) after posting: p99 1.22 times p50 with it,
// 1.05 without.

// The spin before a park (spin.go): a probe at the connection's
// SpinLimit (default DefaultSpinLimit, params.go) that catches nothing
// turns it off; after a catch its budget doubles on a catch and halves on
// a miss, off below spinFloor. After spinRetry waits that parked it
// probes again, after twice as many each time a probe caught nothing, up
// to spinRetryMax. On Linux 6.12's rxe under TCG, whose completions take
// 100-300 µs, longer than any spin here, the first design (halving from
// 50 µs through six misses, retried every 64 parks) cost 0.9 crossings
// per operation, and backing the retries off to 4096 parks still 0.2 in
// a run of 1500 operations ("The spin and lazy arming (2026-12-07)" in
// the lab notes): so a spin that has never caught is a single probe. spinMaxPolls bounds a spin
// by polls too, should the counter misbehave (a goroutine moved to a CPU
// whose counter is behind). Events read without acknowledgement are
// acknowledged every ackBatch (ibv_ack_cq_events takes the CQ's mutex and
// signals its condition variable), and all of them before
// ibv_destroy_cq, which otherwise waits for ever.
const (
	spinFloor    = time.Microsecond
	spinRetry    = 64
	spinRetryMax = 4096
	spinMaxPolls = 1 << 16
	ackBatch     = 16
)

// The quieter's first look (waiter.go, quieter) has no threshold: a
// park's first callback looks at the stash, without a system call, before
// it reads the fd.

// Tuning turns the data path's heuristics off, for the benchmarks that
// measure with and without them and for tests. Set it on a peer
// (Peer.SetTuning) before the peer makes connections, SRQs or endpoints:
// each copies it when created, so nothing on the data path reads a
// process-wide setting. The zero value is the library's default: every
// heuristic on.
type Tuning struct {
	NoYield            bool // no periodic yield of a busy poller (yield.go)
	NoReap             bool // posts do not reap (CQ.reapRoom)
	NoGate             bool // completion channels stay watched (gate.go)
	EmulateAtomicWrite bool // the emulated atomic write, where the device has the native one
	NoCombine          bool // the waiting calls post one by one (combine.go)
	NoSpin             bool // waits never spin, CQs stay armed (spin.go)
}

// SetTuning sets the tuning of what p creates from now on (call it before
// p is used by other goroutines). For benchmarks and tests: the public
// packages do not offer it.
func (p *Peer) SetTuning(t Tuning) {
	p.tune = t
	p.nativeAtomicWrite = p.attr.NativeAtomicWrite() && !t.EmulateAtomicWrite
}

// ReapStats reports, for benchmarks, what the posts on q did since q was
// created: how many posts there were, how many of them reaped (the others
// skipped it: reaping off, a full stash, or backed off after empty reaps),
// and how many reaps found a completion. Read it only while nothing posts
// on q's connection.
func ReapStats(q *CQ) (posts, reaps, hits uint64) {
	return q.reapPosts, q.reapReaps, q.reapHits
}
