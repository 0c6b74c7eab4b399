#!/usr/bin/env python3
"""Lays scripts/trace-op.sh's steps over the disassembly of the Go run.

    python3 scripts/trace-annotate.py OP FUNCTION-REGEXP

prints each instruction of the functions of the traced test binary
(bin/bench/trace-OP-go.bin) whose names match FUNCTION-REGEXP (as
`go tool objdump -s` takes it: Go functions and the cgo wrappers' C
alike), with how many times it ran per operation, and the total of each
function. Instructions that never ran are left out. The C run's binary
is position-independent and its library is shared, so only the Go run
is annotated.
"""
import os
import re
import subprocess
import sys


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__.strip())
    op, regexp = sys.argv[1], sys.argv[2]
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bin", "bench")
    pcs, binary = (os.path.join(root, "trace-%s-go.%s" % (op, ext)) for ext in ("pcs", "bin"))
    if not (os.path.exists(pcs) and os.path.exists(binary)):
        sys.exit("trace-annotate: no trace of %s: run scripts/trace-op.sh %s first" % (op, op))
    steps, ops = {}, 1
    with open(pcs) as f:
        for line in f:
            a, b = line.split()
            if a == "operations":
                ops = max(int(b), 1)
            else:
                steps[int(a, 16)] = int(b)
    dis = subprocess.run(["go", "tool", "objdump", "-s", regexp, binary],
                         check=True, capture_output=True, text=True).stdout
    name, total = None, 0.0

    def close():
        if name is not None:
            print("%8.1f total of %s\n" % (total, name))

    for line in dis.splitlines():
        if line.startswith("TEXT "):
            close()
            name, total = line.split()[1], 0.0
            print(name)
            continue
        f = re.split(r"\t+", line.strip())  # file:line, address, bytes, instruction
        if len(f) < 4 or not re.match(r"0x[0-9a-f]+$", f[1]):
            continue
        n = steps.get(int(f[1], 16), 0) / ops
        if n:
            total += n
            print("%8.1f  %-16s %s" % (n, f[0][-16:], f[3]))
    close()


if __name__ == "__main__":
    main()
