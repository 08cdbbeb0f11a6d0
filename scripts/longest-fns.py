#!/usr/bin/env python3
"""The longest functions of the workspace, by lines from `fn` to its closing brace.

Scans every `.rs` file under the workspace members' `src/` (and `tests/` with
`--tests`), skipping comments, string and char literals; nested functions and
closures count in their enclosing function too.

usage: scripts/longest-fns.py [-n N] [--tests]
"""

import argparse
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FN = re.compile(r"\bfn\s+([A-Za-z_][A-Za-z0-9_]*)")


def blank_literals(src):
    """`src` with comments and literals replaced by spaces (newlines kept)."""
    out, i, n = [], 0, len(src)

    def blank(s):
        return re.sub(r"[^\n]", " ", s)

    while i < n:
        if src.startswith("//", i):
            j = src.find("\n", i)
            j = n if j < 0 else j
        elif src.startswith("/*", i):
            j, depth = i + 2, 1
            while j < n and depth:
                if src.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif src.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
        elif m := re.match(r'b?r(#*)"', src[i:]):
            end = '"' + m.group(1)
            j = src.find(end, i + m.end())
            j = n if j < 0 else j + len(end)
        elif src[i] == '"' or src.startswith('b"', i):
            j = i + (2 if src[i] == "b" else 1)
            while j < n and src[j] != '"':
                j += 2 if src[j] == "\\" else 1
            j += 1
        elif m := re.match(r"b?'(\\.|[^\\'])'", src[i : i + 12]):
            j = i + m.end()
        else:
            out.append(src[i])
            i += 1
            continue
        out.append(blank(src[i:j]))
        i = j
    return "".join(out)


def functions(path):
    text = blank_literals(path.read_text())
    for m in FN.finditer(text):
        # The body starts at the first `{` after the signature, unless a `;` comes first
        # (a declaration without a body).
        brace, semi = text.find("{", m.end()), text.find(";", m.end())
        if brace < 0 or (0 <= semi < brace):
            continue
        depth, j = 0, brace
        while j < len(text):
            if text[j] == "{":
                depth += 1
            elif text[j] == "}":
                depth -= 1
                if depth == 0:
                    break
            j += 1
        first = text.count("\n", 0, m.start()) + 1
        last = text.count("\n", 0, j) + 1
        yield last - first + 1, m.group(1), first


def members():
    text = (ROOT / "Cargo.toml").read_text()
    m = re.search(r"members\s*=\s*\[([^\]]*)\]", text)
    return [ROOT / s for s in re.findall(r'"([^"]+)"', m.group(1))]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=10)
    ap.add_argument("--tests", action="store_true", help="also scan tests/")
    a = ap.parse_args()
    dirs = ["src", "tests"] if a.tests else ["src"]
    found = []
    for crate in members() + [ROOT]:
        for d in dirs:
            base = crate / d
            if not base.is_dir():
                continue
            for f in sorted(base.rglob("*.rs")):
                for lines, name, line in functions(f):
                    found.append((lines, f"{f.relative_to(ROOT)}:{line}", name))
    for lines, at, name in sorted(found, key=lambda t: (-t[0], t[1]))[: a.n]:
        print(f"{lines:5}  {name:<28} {at}")


if __name__ == "__main__":
    main()
