#!/usr/bin/python3
"""Fails on an include that goes upward: reads every quoted #include of the
sources under the stacks of layers.txt (beside this script) and checks it
against the layer order written there. --markdown prints that order as the
table doc/architecture.md holds."""
import argparse
import fnmatch
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
SOURCE = (".h", ".hpp", ".c", ".cpp")
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)


class Layer:
    def __init__(self, stack, name, level, paths):
        self.stack, self.name, self.level, self.paths = stack, name, level, paths

    def __str__(self):
        return f"{self.stack.name}.{self.name}"


class Stack:
    def __init__(self, name, uses):
        self.name, self.uses, self.layers = name, uses, []
        self.levels = 0


class Order:
    """layers.txt, parsed."""

    def __init__(self, path=os.path.join(HERE, "layers.txt")):
        self.stacks, self.include_path = {}, []
        stack = None
        for lineno, raw in enumerate(open(path), 1):
            line = raw.split("#", 1)[0].rstrip()
            if not line:
                continue
            words = line.split()
            if words[0] == "include-path":
                self.include_path += words[1:]
            elif words[0] == "stack":
                uses = words[3:] if len(words) > 2 and words[2] == "uses" else []
                stack = self.stacks[words[1]] = Stack(words[1], uses)
            elif stack is None or not raw[0].isspace():
                raise SystemExit(f"{path}:{lineno}: a layer outside a stack, or an unknown keyword")
            else:
                names, paths = self._split(line)
                if len(names) != len(paths):
                    raise SystemExit(f"{path}:{lineno}: {len(names)} peer names, {len(paths)} path groups")
                for name, group in zip(names, paths):
                    stack.layers.append(Layer(stack, name, stack.levels, group))
                stack.levels += 1
        for s in self.stacks.values():
            for use in s.uses:
                if self.resolve_use(use) is None:
                    raise SystemExit(f"{path}: stack {s.name} uses {use}, which is no stack or layer")

    @staticmethod
    def _split(line):
        """`a | b   p1 p2 | p3` -> (["a", "b"], [["p1", "p2"], ["p3"]])."""
        words = line.split()
        names, i = [words[0]], 1
        while i + 1 < len(words) and words[i] == "|":
            names.append(words[i + 1])
            i += 2
        groups = [[]]
        for w in words[i:]:
            if w == "|":
                groups.append([])
            else:
                groups[-1].append(w)
        return names, groups

    def resolve_use(self, use):
        stack, _, layer = use.partition(".")
        if stack not in self.stacks:
            return None
        if not layer:
            return self.stacks[stack].layers
        found = [lay for lay in self.stacks[stack].layers if lay.name == layer]
        return found or None

    def layers(self):
        return [lay for s in self.stacks.values() for lay in s.layers]

    def layer_of(self, path):
        """The layer whose longest path names `path`, or None."""
        best, length = None, -1
        for lay in self.layers():
            for p in lay.paths:
                hit = (path.startswith(p) if p.endswith("/") else
                       fnmatch.fnmatchcase(path, p) if any(c in p for c in "*?[") else path == p)
                if hit and len(p) > length:
                    best, length = lay, len(p)
        return best

    def may_include(self, a, b):
        if a is b:
            return True
        if a.stack is b.stack:
            return b.level < a.level
        return any(b in self.resolve_use(use) for use in a.stack.uses)


def sources(order):
    roots = sorted({p.split("/")[0] for lay in order.layers() for p in lay.paths})
    for top in roots:
        for dirpath, dirnames, filenames in os.walk(os.path.join(ROOT, top)):
            dirnames.sort()
            for f in sorted(filenames):
                if f.endswith(SOURCE):
                    yield os.path.relpath(os.path.join(dirpath, f), ROOT)


def resolve(order, src, name, exists=os.path.exists):
    for base in [os.path.dirname(src)] + order.include_path:
        path = os.path.normpath(os.path.join(base, name))
        if exists(os.path.join(ROOT, path)):
            return path
    return None  # not the tree's: a system or a fetched SDK header


def violations(order, includes):
    """includes: {source: [included path, ...]} -> messages."""
    out = []
    for src, targets in includes.items():
        a = order.layer_of(src)
        if a is None:
            out.append(f"{src}: in no layer of layers.txt")
            continue
        for t in targets:
            b = order.layer_of(t)
            if b is None:
                out.append(f"{src} includes {t}, which is in no layer of layers.txt")
            elif not order.may_include(a, b):
                why = ("a peer" if a.stack is b.stack and a.level == b.level else
                       "a higher layer" if a.stack is b.stack else f"a stack {a.stack.name} does not use")
                out.append(f"{src} includes {t}: {a} may not include {b}, {why}")
    return out


def tree_includes(order):
    includes = {}
    for src in sources(order):
        text = open(os.path.join(ROOT, src), errors="replace").read()
        includes[src] = [t for t in (resolve(order, src, n) for n in INCLUDE.findall(text)) if t and t != src]
    return includes


def markdown(order):
    rows = ["| stack | level | layer | where |", "|---|---|---|---|"]
    for s in order.stacks.values():
        uses = f" (uses {', '.join(s.uses)})" if s.uses else ""
        for level in range(s.levels):
            peers = [lay for lay in s.layers if lay.level == level]
            names = " / ".join(lay.name for lay in peers)
            where = " ".join(f"`{p}`" for lay in peers for p in lay.paths)
            rows.append(f"| {s.name + uses if level == 0 else ''} | {level} | {names} | {where} |")
    return "\n".join(rows)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--markdown", action="store_true", help="print the layer order as a markdown table")
    args = ap.parse_args()
    order = Order()
    if args.markdown:
        print(markdown(order))
        return 0
    includes = tree_includes(order)
    found = violations(order, includes)
    for v in found:
        print(v)
    edges = sum(len(t) for t in includes.values())
    print(f"layers: {len(includes)} files, {edges} includes, {len(found)} against the order")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
