#!/usr/bin/env python3
"""Code size limits of the Rust sources (run by `make lint`): no source file outside tests over 500 lines, no function
outside tests over 80 lines. Test code is exempt: files named tests.rs, files under a tests/ folder, and inline
`#[cfg(test)] mod tests { ... }` blocks. Generated code (the tfplugin5 bindings) is not in the tree.

Prints every violation with its place and exits 1 when there is one."""
import pathlib
import re
import sys

MAX_FILE_LINES = 500
MAX_FN_LINES = 80
ROOTS = ["operator", "provider", "acceptance-tests/src"]
FN = re.compile(r"^\s*(pub(\([^)]*\))?\s+)?(const\s+)?(async\s+)?(unsafe\s+)?fn\s+(\w+)")


def is_test_file(path: pathlib.Path) -> bool:
    return path.name == "tests.rs" or "tests" in path.parts


def without_test_modules(lines):
    """The lines before the first inline `#[cfg(test)]` module (our files keep it last)."""
    for i, line in enumerate(lines):
        if line.strip() == "#[cfg(test)]" and i + 1 < len(lines) and lines[i + 1].strip().startswith("mod tests"):
            if lines[i + 1].strip().endswith(";"):
                continue
            return lines[:i]
    return lines


def functions(lines):
    """(name, first line, length) of every fn with a body, by brace counting (strings with braces are rare here)."""
    out = []
    i = 0
    while i < len(lines):
        m = FN.match(lines[i])
        if not m:
            i += 1
            continue
        depth, start, opened = 0, i, False
        j = i
        while j < len(lines):
            code = re.sub(r'"(\\.|[^"\\])*"', '""', lines[j].split("//")[0])
            if not opened and ";" in code and "{" not in code:
                break  # a declaration without a body (trait method)
            depth += code.count("{") - code.count("}")
            opened = opened or "{" in code
            if opened and depth <= 0:
                out.append((m.group(6), start + 1, j - start + 1))
                break
            j += 1
        i = j + 1 if opened else i + 1
    return out


def main() -> int:
    top = pathlib.Path(__file__).resolve().parents[2]
    problems = []
    for root in ROOTS:
        for path in sorted((top / root).rglob("*.rs")):
            rel = path.relative_to(top)
            if is_test_file(rel) or "target" in rel.parts:
                continue
            lines = without_test_modules(path.read_text().splitlines())
            if len(lines) > MAX_FILE_LINES:
                problems.append(f"{rel}: {len(lines)} lines outside tests (limit {MAX_FILE_LINES})")
            for name, line, length in functions(lines):
                if length > MAX_FN_LINES:
                    problems.append(f"{rel}:{line}: fn {name} is {length} lines (limit {MAX_FN_LINES})")
    for p in problems:
        print(p)
    if problems:
        print(f"code-size: {len(problems)} violation(s): split the file or function into smaller ones")
        return 1
    print("code-size: every file and function within limits")
    return 0


if __name__ == "__main__":
    sys.exit(main())
