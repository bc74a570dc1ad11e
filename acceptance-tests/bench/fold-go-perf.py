#!/usr/bin/env python3
"""Folds a `perf record -g` profile of a stripped Go binary into flame graph stacks (issue 17, "profile; flamegraphs
into the docs").

Terraform's release binaries are stripped of their ELF symbol table, so `perf report` shows bare addresses; a Go
binary keeps its own symbol table (pclntab) for stack traces, and `go tool addr2line` reads it. This script takes the
samples of one command name from `perf script`, maps every frame of BINARY to its Go function (file offsets plus the
binary's load address, read from its first LOAD segment), and prints one `frame;frame;... count` line per distinct
stack, root first: the input of `inferno-flamegraph` (or flamegraph.pl). Frames of other objects (the kernel, libc)
are dropped. With --top N it prints the N functions with the largest inclusive share instead.

Usage: fold-go-perf.py PERF_DATA BINARY COMM [--top N]
"""
import collections
import subprocess
import sys


def load_address(binary):
    """The virtual address of the binary's first LOAD segment (file offset 0 for Go's linker)."""
    out = subprocess.run(["readelf", "-lW", binary], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        fields = line.split()
        if fields and fields[0] == "LOAD":
            return int(fields[2], 16) - int(fields[1], 16)
    sys.exit(f"{binary}: no LOAD segment")


def samples(perf_data, binary, comm):
    """Each sample of COMM as its list of BINARY addresses, leaf first."""
    text = subprocess.run(["perf", "script", "-i", perf_data, "-F", "comm,ip,dso"],
                          capture_output=True, text=True, check=True).stdout
    return parse_script(text, binary.rsplit("/", 1)[-1], comm, load_address(binary))


def parse_script(text, binary_name, comm, base):
    """The stacks of `perf script -F comm,ip,dso` text: for each sample of COMM, the addresses of its frames in the
    object named BINARY_NAME (file offsets plus BASE), leaf first; samples with no such frame are left out."""
    stacks, current, keep = [], [], False
    for line in text.splitlines():
        if not line.strip():
            if keep and current:
                stacks.append(current)
            current, keep = [], False
        elif not line[0].isspace():
            keep = line.strip() == comm
        elif keep:
            ip, dso = line.split(None, 1)
            if dso.strip().strip("()").endswith(binary_name):
                current.append(int(ip, 16) + base)
    if keep and current:
        stacks.append(current)
    return stacks


def symbolize(binary, addresses):
    """Go function name of each address (`go tool addr2line`)."""
    ordered = sorted(addresses)
    out = subprocess.run(["go", "tool", "addr2line", binary], input="".join(f"{a:#x}\n" for a in ordered),
                         capture_output=True, text=True, check=True).stdout.splitlines()
    return {a: out[2 * i] for i, a in enumerate(ordered)}


def fold(stacks, names):
    """`root;...;leaf count` lines, one per distinct stack of function names, sorted."""
    folded = collections.Counter(";".join(names[a] for a in reversed(s)) for s in stacks)
    return [f"{stack} {count}" for stack, count in sorted(folded.items())]


def top(stacks, names, n):
    """The N functions on the most stacks (inclusive share, a function counted once per stack), as `share%  name`."""
    inclusive = collections.Counter()
    for s in stacks:
        for name in {names[a] for a in s}:
            inclusive[name] += 1
    return [f"{100 * count / len(stacks):5.1f}%  {name}" for name, count in inclusive.most_common(n)]


def main():
    if len(sys.argv) not in (4, 6):
        sys.exit(__doc__)
    perf_data, binary, comm = sys.argv[1:4]
    stacks = samples(perf_data, binary, comm)
    names = symbolize(binary, {a for s in stacks for a in s})
    lines = top(stacks, names, int(sys.argv[5])) if len(sys.argv) == 6 else fold(stacks, names)
    for line in lines:
        print(line)


if __name__ == "__main__":
    main()
