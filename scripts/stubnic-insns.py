#!/usr/bin/env python3
"""Counts the user-space instructions per operation of the stub NIC's rows.

    python3 scripts/stubnic-insns.py [ROW-REGEXP]

builds the test binaries of internal/ibv and internal/core with the tag
rpma_stubnic, runs each row of their BenchmarkStubNIC under valgrind's
callgrind twice, for N1 and N2 operations, and prints, per row, the
instructions per operation (the difference of the two runs over N2-N1,
which cancels the set-up) split into groups by function: the stub
provider's own work (what a hardware provider's code replaces), the C
helpers of package ibv (the cgo wrappers' C side, rpma_ibv.h), Go's
runtime (the crossing: cgocall, entersyscall, exitsyscall, ...), the
library's Go code, the C loop's librpma functions, and the benchmark's
loop. The top functions of each row follow.

Callgrind counts each instruction the program retires, as a hardware
counter of user-space instructions would (doc/notes/native-stub.md); it
does not time anything: the ns figures come from the native runs of
`go test -bench StubNIC`. This script is for hosts where
perf_event_open cannot count instructions (a VM without a PMU).

    STUBNIC_N1=100000 STUBNIC_N2=200000   the two runs' operations
"""
import collections
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")

# The rows, by package: (benchmark pattern, operations per b.N).
ROWS = {
    "ibv": [("^BenchmarkStubNIC$/^Go$/^%s$" % r, 1) for r in (
        "Crossing", "WriteReap", "WritePoll", "ReadReap", "WriteFlushReap", "Inline8Reap", "FetchAddReap",
        "Batch8Reap", "RecvPost", "ReqNotify")] +
    [("^BenchmarkStubNIC$/^C$/^%s$" % r, 1) for r in (
        "Raw", "WritePoll", "ReadPoll", "WriteFlushPoll", "FlushPoll", "AtomicWritePoll", "SendPoll", "ReqNotify")],
    "core": [("^BenchmarkStubNIC$/^%s$/^%s$" % (m, r), 1) for m in ("Reap", "NoReap") for r in (
        "Write64", "Read64", "Flush", "AtomicWrite", "FetchAndAdd", "Send64", "WriteAndFlush64", "WriteThenFlush64")],
}

# Groups of functions, tried in order against "file:function".
GROUPS = [
    ("stub", re.compile(r":rpma_stub_")),
    ("librpma-C", re.compile(r"(:rpma_cl_|:rpma_stubnic_cloop|Cfunc_rpma_stubnic_cloop)")),
    ("ibv-C", re.compile(r"(_cgo_[0-9a-f]+_Cfunc_|rpma_ibv\.h|cgo-gcc-prolog)")),
    ("crossing", re.compile(r":(runtime\.(cgocall|asmcgocall|asmcgocall_landingpad|entersyscall|reentersyscall|exitsyscall"
                            r"|exitsyscallfast|save|getcallerfp|casgstatus|cgoCheckPointer|cgoUse)(\.abi0)?"
                            r"|gosave_systemstack_switch|_cgo_topofstack)$")),
    ("runtime", re.compile(r"(:runtime\.|:internal/runtime|:sync\.|:internal/sync)")),
    # The benchmarks' own code (their files; library code inlined into
    # their closures keeps its file, and counts as the library's).
    ("bench", re.compile(r"(_test\.go:|:testing\.)")),
    ("lib-Go", re.compile(r":github\.com/gorpma/rpma/")),
]

LINE = re.compile(r"^\s*([\d,]+)\s+(?:\([^)]*\)\s+)?(\S.*?)(?:\s+\[[^]]*\])?$")


def counted(binary, bench, n):
    """self_costs, run again (up to 3 times) when it counted nothing:
    callgrind now and then misses the entry of the toggle function (Go's
    goroutine stacks and its calls are not always told apart), and then
    collects nothing."""
    for _ in range(3):
        costs = self_costs(binary, bench, n)
        if sum(costs.values()) >= 20 * n:
            return costs
    sys.exit("stubnic-insns: callgrind counted nothing in %s" % bench)


def self_costs(binary, bench, n):
    """Runs bench for n operations under callgrind; self cost by function,
    counted only inside the function running the row's loop (TOGGLE), on
    the loop's thread (the rows lock their goroutine to one): the other
    threads (sysmon, idle Ps spinning for work) and the test's set-up
    (runtime.GC before each run) run for as long as valgrind stretches
    them, which says nothing of an operation."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "callgrind.out")
        env = dict(os.environ, GODEBUG="asyncpreemptoff=1", GOGC="off")
        subprocess.run(["valgrind", "--tool=callgrind", "--separate-threads=yes", "--callgrind-out-file=" + out,
                        "--toggle-collect=" + TOGGLE[pkg_of(bench)],
                        binary, "-test.run", "^$", "-test.bench", bench, "-test.benchtime", "%dx" % n],
                       env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        best, best_mark = collections.Counter(), -1
        for f in os.listdir(tmp):
            costs = annotate(os.path.join(tmp, f))
            mark = sum(v for k, v in costs.items() if group_of(k) in ("stub", "ibv-C", "lib-Go", "librpma-C", "bench"))
            if mark > best_mark:
                best, best_mark = costs, mark
    return best


# The functions that run the rows' loops: only what runs inside them
# (and what they call) is counted.
TOGGLE = {
    "ibv-Go": "github.com/gorpma/rpma/internal/ibv_test.benchStubGo.func1",
    "ibv-C": "*Cfunc_rpma_stubnic_cloop",
    "core": "github.com/gorpma/rpma/internal/core.BenchmarkStubNIC.func1",
}


def pkg_of(bench):
    if "/^Go$/" in bench:
        return "ibv-Go"
    if "/^C$/" in bench:
        return "ibv-C"
    return "core"


def annotate(path):
    """The self cost by function of one callgrind output file."""
    costs = collections.Counter()
    run = subprocess.run(["callgrind_annotate", "--auto=no", "--threshold=100", path], capture_output=True, text=True)
    if run.returncode != 0:
        return costs  # a thread's file with no cost in it
    ann = run.stdout
    started = False
    for line in ann.splitlines():
        if "file:function" in line:
            started = True
            continue
        if started and not line.strip():
            break
        m = LINE.match(line)
        if started and m:
            costs[m.group(2)] += int(m.group(1).replace(",", ""))
    return costs


def group_of(name):
    for g, pat in GROUPS:
        if pat.search(name):
            return g
    return "other"


def main():
    pick = re.compile(sys.argv[1]) if len(sys.argv) > 1 else None
    n1 = int(os.environ.get("STUBNIC_N1", "100000"))
    n2 = int(os.environ.get("STUBNIC_N2", "200000"))
    tmp = tempfile.mkdtemp()
    for pkg, rows in ROWS.items():
        rows = [r for r in rows if pick is None or pick.search(pkg + "/" + r[0])]
        if not rows:
            continue
        binary = os.path.join(tmp, pkg + ".test")
        subprocess.run(["go", "test", "-tags", "rpma_stubnic", "-c", "-o", binary, "./internal/" + pkg + "/"],
                       cwd=ROOT, check=True)
        for bench, per in rows:
            a, b = counted(binary, bench, n1), counted(binary, bench, n2)
            ops = (n2 - n1) * per
            per_fn = {k: (b[k] - a[k]) / ops for k in set(a) | set(b)}
            groups = collections.Counter()
            for k, v in per_fn.items():
                groups[group_of(k)] += v
            total = sum(per_fn.values())
            print("%s/%s\t%.0f insns/op\t%s" % (pkg, bench.replace("^", "").replace("$", "").replace("Benchmark", "", 1), total,
                  "  ".join("%s %.0f" % (g, v) for g, v in sorted(groups.items(), key=lambda x: -x[1]) if abs(v) >= 0.5)))
            for k, v in sorted(per_fn.items(), key=lambda x: -x[1]):
                if v < 2:
                    break
                print("\t%6.1f  %s" % (v, k))
            sys.stdout.flush()


if __name__ == "__main__":
    main()
