#!/usr/bin/env python3
"""Prints scripts/bench-spin.sh's table from a kernel's raw outputs
(bin/bench/spin-KERNEL): per row, Go's mean with the spin on and off,
their ratio, each over librpma's Write64Wait (medians of per-round
ratios, min-max), crossings, spins and catches per operation; then the
system-call runs' ranges.

    python3 scripts/spin-table.py bin/bench/spin-6.1
"""
import sys, re, statistics as st
d = sys.argv[1]
def rounds(fn):
    out = {}; r = None
    for line in open(f"{d}/{fn}"):
        m = re.match(r"# (round|sys) (\d+)", line)
        if m: r = int(m.group(2)); continue
        m = re.match(r"(BenchmarkOps/\S+?)(-\d+)?\s+\d+\s+(.*)", line)
        if not m or r is None: continue
        name = m.group(1).split("/")[1]
        vals = {}
        toks = m.group(3).split()
        for i in range(len(toks) - 1):
            if toks[i+1].endswith("/op") or toks[i+1].endswith("-ns"):
                try: vals[toks[i+1]] = float(toks[i])
                except: pass
        out.setdefault(r, {})[name] = vals
    return out
on, off, c = rounds("on.txt"), rounds("off.txt"), rounds("c.txt")
def med(xs): return st.median(xs) if xs else float('nan')
for row in ["Write64", "Write64Wait", "Write64WaitThread"]:
    ons = [on[r][row]["ns/op"] for r in on if row in on[r]]
    offs = [off[r][row]["ns/op"] for r in off if row in off[r]]
    line = f"{row}: ns/op (median of rounds) on {med(ons):.0f} off {med(offs):.0f}"
    oo = [on[r][row]["ns/op"]/off[r][row]["ns/op"] for r in on if r in off and row in on[r] and row in off[r]]
    line += f" | on/off {med(oo):.2f} ({min(oo):.2f}-{max(oo):.2f}) n={len(oo)}"
    if row.startswith("Write64Wait"):
        cr = [r for r in on if r in c and "Write64Wait" in c[r] and row in on[r] and r in off]
        a = [on[r][row]["ns/op"]/c[r]["Write64Wait"]["ns/op"] for r in cr]
        b = [off[r][row]["ns/op"]/c[r]["Write64Wait"]["ns/op"] for r in cr]
        cs = [c[r]["Write64Wait"]["ns/op"] for r in cr]
        if a: line += f" | C {med(cs):.0f} on/C {med(a):.2f} ({min(a):.2f}-{max(a):.2f}) off/C {med(b):.2f} ({min(b):.2f}-{max(b):.2f})"
    for k in ["crossings/op", "spins/op", "caught/op"]:
        x = [on[r][row].get(k) for r in on if row in on[r] and on[r][row].get(k) is not None]
        y = [off[r][row].get(k) for r in off if row in off[r] and off[r][row].get(k) is not None]
        if x: line += f" | {k} on {med(x):.2f} off {med(y):.2f}"
    print(line)
for fn in ["sys-on.txt", "sys-off.txt"]:
    try: s = rounds(fn)
    except FileNotFoundError: continue
    for row in ["Write64", "Write64Wait", "Write64WaitThread"]:
        vals = {k: [s[r][row][k] for r in s if row in s[r] and k in s[r][row]] for k in ["syscalls/op", "futex/op", "sleeps/op", "clock/op", "crossings/op"]}
        print(fn, row, " ".join(f"{k} {min(v):.2f}-{max(v):.2f}" for k, v in vals.items() if v))
