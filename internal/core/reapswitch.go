package core

// reapOff, set by SetReaping(false), makes every post skip its reap
// (reapRoom returns 0). It is read on every post (CQ.reapRoom), without
// synchronisation; only benchmarks set it.
var reapOff bool

// SetReaping turns the reaping of posts (see CQ.reapRoom) on, the
// default, or off, for every CQ of the process: a process-global switch
// of a data-path heuristic, read by every post. Only benchmarks call it:
// conn's BenchmarkOps measures the same binary with and without it
// (RPMA_BENCH_REAP=0, conn/bench_remote_linux_test.go). It is not
// synchronized: call it before any connection exists.
func SetReaping(on bool) { reapOff = !on }

// ReapStats reports, for benchmarks, what the posts on q did (counters
// every post updates) since q was
// created: how many posts there were, how many of them reaped (the others
// skipped it: reaping off, a full stash, or backed off after empty reaps),
// and how many reaps found a completion. Read it only while nothing posts
// on q's connection.
func ReapStats(q *CQ) (posts, reaps, hits uint64) {
	return q.reapPosts, q.reapReaps, q.reapHits
}
