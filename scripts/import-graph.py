#!/usr/bin/env python3
"""Module-level import graph of every workspace crate, and its cycles.

For each crate (a directory with `src/lib.rs`), every `.rs` file under `src/`
belongs to a module; a node is a module path cut at DEPTH components
(DEPTH = 1: the crate's top-level modules, `crate::ops`, `crate::check`, ...).
An edge `a -> b` means code of `a` names an item of `b`: a `crate::b::...`
path, a `super::...` path that resolves into `b`, or a root re-export
(`crate::Op` where `lib.rs` has `pub use ops::Op`). Comments are ignored; test
modules count like the rest. Binaries (`src/bin/`) are left out.

Prints, per crate, the edges and the strongly connected components of more
than one node (the cycles); exits 1 if there is a cycle.

usage: scripts/import-graph.py [--depth N] [--tests] [--quiet] [CRATE_DIR...]
       (default: every workspace member)
"""

import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
IDENT = r"[A-Za-z_][A-Za-z0-9_]*"


def strip_comments(src):
    """Removes `//` comments, `/* */` comments and string literals' contents."""
    out, i, n = [], 0, len(src)
    while i < n:
        if src.startswith("//", i):
            j = src.find("\n", i)
            i = n if j < 0 else j
        elif src.startswith("/*", i):
            j = src.find("*/", i + 2)
            i = n if j < 0 else j + 2
        elif src[i] == '"':
            j = i + 1
            while j < n and src[j] != '"':
                j += 2 if src[j] == "\\" else 1
            out.append('""')
            i = j + 1
        elif src[i] == "'" and re.match(r"'(\\.|[^\\'])'", src[i : i + 4]):
            m = re.match(r"'(\\.|[^\\'])'", src[i : i + 4])
            out.append("' '")
            i += len(m.group(0))
        else:
            out.append(src[i])
            i += 1
    return "".join(out)


CFG_TEST = re.compile(r"#\[cfg\(test\)\]\s*(?:pub(?:\([^)]*\))?\s+)?")


def strip_tests(text):
    """Removes `#[cfg(test)]` items from comment-free source; returns the text and the
    names of out-of-line test modules (`#[cfg(test)] mod name;`)."""
    out_of_line = []
    while True:
        m = CFG_TEST.search(text)
        if not m:
            return text, out_of_line
        rest = text[m.end():]
        decl = re.match(r"mod\s+(" + IDENT + r")\s*;", rest)
        if decl:
            out_of_line.append(decl.group(1))
            text = text[: m.start()] + rest[decl.end():]
            continue
        # An item up to its `;` or its balanced `{...}`, whichever ends it first.
        depth, i = 0, 0
        while i < len(rest):
            ch = rest[i]
            if ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
                if depth == 0:
                    break
            elif ch == ";" and depth == 0:
                break
            i += 1
        text = text[: m.start()] + rest[i + 1 :]


def module_of(src_dir, file):
    """The module path of a source file, as a list (`[]` for the crate root)."""
    rel = file.relative_to(src_dir).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] in ("mod", "lib"):
        parts = parts[:-1]
    return parts


def brace_heads(text, start):
    """The first path segment of each entry of the `{...}` group at `text[start]`."""
    heads, depth, cur = [], 0, ""
    for ch in text[start:]:
        if ch == "{":
            depth += 1
            if depth == 1:
                continue
        elif ch == "}":
            depth -= 1
            if depth == 0:
                break
        if depth == 1 and ch == ",":
            heads.append(cur)
            cur = ""
        elif depth >= 1:
            cur += ch
    heads.append(cur)
    out = []
    for h in heads:
        m = re.match(r"\s*(" + IDENT + ")", h)
        if m:
            out.append(m.group(1))
    return out


def references(text):
    """Every path reference: (base, first segment after it), base `crate` or a run of
    `super`s (as a count)."""
    for m in re.finditer(r"\b((?:super::)+|crate::|self::)\s*(\{|" + IDENT + ")", text):
        base = m.group(1)
        if base == "self::":
            continue
        ups = 0 if base == "crate::" else base.count("super")
        if m.group(2) == "{":
            for h in brace_heads(text, m.end() - 1):
                yield ups, h
        else:
            yield ups, m.group(2)


def root_reexports(lib_text, modules):
    """Names re-exported at the crate root by `pub use MODULE::...`, mapped to MODULE."""
    names = {}
    for m in re.finditer(r"pub use (" + IDENT + r")::([^;]*);", lib_text):
        if m.group(1) not in modules:
            continue
        for name in re.findall(IDENT, m.group(2)):
            names[name] = m.group(1)
    return names


def crate_graph(crate_dir, depth, tests):
    src = crate_dir / "src"
    files = [f for f in src.rglob("*.rs") if "bin" not in f.relative_to(src).parts]
    mods = {f: module_of(src, f) for f in files}
    texts = {f: strip_comments(f.read_text()) for f in files}
    if not tests:
        test_only = set()
        for f in files:
            texts[f], names = strip_tests(texts[f])
            for n in names:
                test_only.add(tuple(mods[f] + [n]))
        files = [f for f in files if not any(tuple(mods[f][: len(t)]) == t for t in test_only)]
        mods = {f: mods[f] for f in files}
    top = {m[0] for m in mods.values() if m}
    lib = src / "lib.rs"
    reexp = root_reexports(strip_comments(lib.read_text()), top) if lib.exists() else {}
    nodes, edges = set(), set()
    for f, path in mods.items():
        if not path:
            continue
        me = tuple(path[:depth])
        nodes.add(me)
        text = texts[f]
        # Inline `mod x { ... }` blocks are rare and private: treated as the file's module.
        for ups, head in references(text):
            if ups > len(path):
                continue
            base = path[: len(path) - ups] if ups else []
            target = base + [head]
            if not base and head not in top:
                if head in reexp:
                    target = [reexp[head]]
                else:
                    continue  # an item defined in lib.rs itself
            # Keep only module segments that exist as files (items end the path).
            known = [p for p in mods.values() if p[: len(target)] == target]
            if not known:
                target = target[:-1]
            if not target:
                continue
            t = tuple(target[:depth])
            if t != me[: len(t)] and me != t[: len(me)]:
                edges.add((me, t))
                nodes.add(t)
    return nodes, edges


def sccs(nodes, edges):
    """Tarjan's strongly connected components."""
    adj = {n: sorted(b for a, b in edges if a == n) for n in nodes}
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in adj[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            out.append(comp)

    sys.setrecursionlimit(10000)
    for n in sorted(nodes):
        if n not in index:
            visit(n)
    return out


def members():
    text = (ROOT / "Cargo.toml").read_text()
    m = re.search(r"members\s*=\s*\[([^\]]*)\]", text)
    return [ROOT / s for s in re.findall(r'"([^"]+)"', m.group(1))]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--depth", type=int, default=1)
    ap.add_argument("--tests", action="store_true", help="include test-only code")
    ap.add_argument("--quiet", action="store_true", help="print only the cycles")
    ap.add_argument("crates", nargs="*", type=Path)
    a = ap.parse_args()
    cycles = 0
    for crate in a.crates or members():
        nodes, edges = crate_graph(crate.resolve(), a.depth, a.tests)
        name = crate.resolve().name
        comps = [c for c in sccs(nodes, edges) if len(c) > 1]
        cycles += len(comps)
        if not a.quiet:
            print(f"## {name}")
            for src in sorted(nodes):
                outs = sorted("::".join(b) for x, b in edges if x == src)
                print(f"  {'::'.join(src)} -> {', '.join(outs) if outs else '(none)'}")
        for c in comps:
            print(f"  CYCLE in {name}: {' <-> '.join(sorted('::'.join(n) for n in c))}")
    if cycles:
        print(f"{cycles} cycle(s)")
        return 1
    if not a.quiet:
        print("no cycles")
    return 0


if __name__ == "__main__":
    sys.exit(main())
