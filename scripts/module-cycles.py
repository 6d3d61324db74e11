#!/usr/bin/env python3
"""Fails when modules of one crate import each other in a circle.

For every crate of the workspace (a directory with Cargo.toml and src/), each module's
`crate::`, `super::` and `self::` paths are read (comments and `#[cfg(test)]` modules left
out) and resolved to the modules they name. Two sibling modules that reach each other,
directly or through other siblings, are a circle: printed with the lines that make it, and
the script exits 1.

    python3 scripts/module-cycles.py            # every crate of the workspace
    python3 scripts/module-cycles.py tool-agent # one crate
"""

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PATH = re.compile(r"\b(crate|super|self)((?:::[A-Za-z_][A-Za-z0-9_]*)+)")
INLINE = re.compile(r"^\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+([A-Za-z_][A-Za-z0-9_]*)\s*\{")
TESTS = re.compile(r"#\[cfg\(test\)\]\s*(pub(\(crate\))?\s+)?mod\s+\w+\s*\{", re.S)


def module_of(src: Path, file: Path) -> tuple:
    """The module path of a source file: src/a/b.rs and src/a/b/mod.rs are ("a", "b")."""
    parts = list(file.relative_to(src).with_suffix("").parts)
    if parts[-1] in ("mod", "lib", "main"):
        parts.pop()
    return tuple(parts)


def code_of(text: str) -> str:
    """The text without comments and without the `#[cfg(test)]` modules."""
    match = TESTS.search(text)
    if match:
        text = text[: match.start()]
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return "\n".join(line.split("//", 1)[0] for line in text.splitlines())


def edges_of(src: Path) -> dict:
    """For each pair of sibling modules (a, b): the lines of `a` that name `b`."""
    files = sorted(src.rglob("*.rs"))
    modules = {module_of(src, f) for f in files}
    for file in files:  # and the inline modules
        for match in re.finditer(INLINE.pattern, code_of(file.read_text()), re.M):
            modules.add(module_of(src, file) + (match.group(1),))
    edges = {}
    for file in files:
        outer = module_of(src, file)
        inline = []  # the inline `mod name {` blocks open here, with the depth they opened at
        depth = 0
        for number, line in enumerate(code_of(file.read_text()).splitlines(), 1):
            bare = re.sub(r'"(\\.|[^"\\])*"', '""', line)
            here = outer + tuple(name for name, _ in inline)
            opened = INLINE.search(bare)
            depth += bare.count("{") - bare.count("}")
            if opened:
                inline.append((opened.group(1), depth - 1))
            while inline and depth <= inline[-1][1]:
                inline.pop()
            for anchor, rest in PATH.findall(line):
                names = tuple(rest.strip(":").split("::"))
                if anchor == "crate":
                    base = ()
                elif anchor == "self":
                    base = here
                else:
                    base = here[:-1]
                    while names and names[0] == "super":
                        base, names = base[:-1], names[1:]
                target = base
                for name in names:
                    if base + (name,) in modules or target + (name,) in modules:
                        target = target + (name,)
                    else:
                        break
                common = 0
                while (
                    common < min(len(here), len(target)) and here[common] == target[common]
                ):
                    common += 1
                if common == len(here) or common == len(target):
                    continue  # a module and its own ancestor or descendant
                pair = (here[: common + 1], target[: common + 1])
                where = f"{file.relative_to(ROOT)}:{number}"
                edges.setdefault(pair, []).append(where)
    return edges


def circles(edges: dict) -> list:
    """The strongly connected groups of more than one module (Tarjan)."""
    graph = {}
    for a, b in edges:
        graph.setdefault(a, set()).add(b)
        graph.setdefault(b, set())
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                group.append(top)
                if top == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    sys.setrecursionlimit(10000)
    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def main() -> int:
    crates = sys.argv[1:] or sorted(
        p.parent.name for p in ROOT.glob("*/Cargo.toml") if (p.parent / "src").is_dir()
    )
    crates = [c for c in crates if (ROOT / c / "src").is_dir()] + (
        ["."] if not sys.argv[1:] else []
    )
    failed = False
    for crate in crates:
        src = ROOT / crate / "src"
        edges = edges_of(src)
        for group in circles(edges):
            failed = True
            names = ", ".join("::".join(m) for m in group)
            print(f"{crate if crate != '.' else 'ai-tool'}: modules in a circle: {names}")
            members = set(group)
            for (a, b), lines in sorted(edges.items()):
                if a in members and b in members:
                    shown = ", ".join(lines[:3]) + (" ..." if len(lines) > 3 else "")
                    print(f"  {'::'.join(a)} -> {'::'.join(b)}: {shown}")
    if failed:
        print("break each circle: move what both sides need into a module of its own")
        return 1
    print(f"no circles between the modules of {len(crates)} crates")
    return 0


if __name__ == "__main__":
    sys.exit(main())
