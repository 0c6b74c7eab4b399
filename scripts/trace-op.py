# gdb script of scripts/trace-op.sh: single-steps the user-space
# instructions of TRACE_OPS consecutive operations of a benchmark and writes
# a per-function count to TRACE_OUT. The operations are those between
# TRACE_SKIP+1 entries of TRACE_FN and the TRACE_OPS-th entry after (a
# call that starts each operation). System calls are one step each: the
# kernel's instructions are not in the count. TRACE_OUT.pcs gets the
# steps of each instruction address (all operations together), which
# scripts/trace-annotate.py lays over the disassembly.
import collections
import os

import gdb

out = os.environ["TRACE_OUT"]
fn = os.environ["TRACE_FN"]
skip = int(os.environ.get("TRACE_SKIP", "200"))
ops = int(os.environ.get("TRACE_OPS", "3"))
limit = 100000 * ops

for c in ("set pagination off", "set confirm off",
          "handle SIGURG nostop noprint pass",  # Go's preemption signal
          "handle SIGPIPE nostop noprint pass",
          "handle SIGALRM nostop noprint pass"):
    gdb.execute(c)
gdb.execute("break " + fn)
gdb.execute("ignore 1 %d" % skip)
gdb.execute("run", to_string=True)
start = int(gdb.parse_and_eval("$pc"))
gdb.execute("delete")
# Only the traced thread runs while it steps: no other thread's work is
# counted, and none of the runtime's threads is needed by the data path.
gdb.execute("set scheduler-locking step")
pcs = []
entries = 0
while len(pcs) < limit:
    gdb.execute("stepi", to_string=True)
    pc = int(gdb.parse_and_eval("$pc"))
    if pc == start:
        entries += 1
        if entries == ops:
            break
    pcs.append(pc)


def symbol(pc):
    s = gdb.execute("info symbol 0x%x" % pc, to_string=True).strip()
    if s.startswith("No symbol"):
        # A stripped object (the rxe provider): name its file.
        for line in gdb.execute("info proc mappings", to_string=True).splitlines():
            f = line.split()
            if len(f) >= 5 and f[0].startswith("0x"):
                lo, hi = int(f[0], 16), int(f[1], 16)
                if lo <= pc < hi:
                    return "? in " + os.path.basename(f[-1])
        return "?"
    name, _, where = s.partition(" in section ")
    name = name.rsplit(" + ", 1)[0]
    obj = where.split(" of ")[1] if " of " in where else ""
    return name + (" in " + os.path.basename(obj) if obj else "")


def part(sym):
    """The part of the program a function belongs to."""
    name, _, obj = sym.partition(" in ")
    if name.startswith("github.com/gorpma/rpma/conn_test.") or (
            obj == "rpma_lat" and not name.startswith("rpma_")):
        return "benchmark loop"
    if name.startswith("github.com/gorpma/rpma/"):
        return "library, Go"
    if name.startswith("_cgo_") and name != "_cgo_topofstack":
        return "library, C (cgo wrappers)"
    if obj.startswith("librpma") or name.startswith("rpma_"):
        return "librpma"
    if obj in ("conn.test", ""):
        return "Go runtime"
    return "rdma-core and libc"


syms = {pc: symbol(pc) for pc in set(pcs)}
count = collections.Counter(syms[pc] for pc in pcs)
parts = collections.Counter()
for s, n in count.items():
    parts[part(s)] += n
per = max(entries, 1)
with open(out, "w") as f:
    f.write("operations %d\ninstructions per operation %.1f\n" % (entries, len(pcs) / per))
    for p, n in parts.most_common():
        f.write("%8.1f   %s\n" % (n / per, p))
    f.write("by function:\n")
    for s, n in count.most_common():
        f.write("%8.1f %s\n" % (n / per, s))
with open(out + ".pcs", "w") as f:
    f.write("operations %d\n" % entries)
    for pc, n in sorted(collections.Counter(pcs).items()):
        f.write("0x%x %d\n" % (pc, n))
gdb.execute("kill")
