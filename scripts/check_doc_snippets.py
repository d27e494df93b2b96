#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Compile every C++ snippet of the documentation, so that a renamed field breaks the docs' build.

    scripts/check_doc_snippets.py --cxx g++ --flags "-std=c++20 -Iinclude ..." --link "-lboost_context -pthread"
                                  [--build DIR] [--jobs N] [--list] [FILE.md ...]

Every ```cpp / ```c++ fence in README.md and docs/*.md (or the files named) needs a comment right
above it that says what it is (docs/api.md, "Snippets in the documentation are compiled"):

    <!-- snippet: program -->               a whole program: compiled, linked and run (exit 0 passes)
    <!-- snippet: declarations -->          namespace-scope code: compiled inside a namespace of its own
    <!-- snippet: statements [run] -->      a function body: compiled inside a function; `run`: the
                                            function is called from main, linked and run
    <!-- snippet: members -->               class members: compiled inside a struct
    <!-- snippet: quote FILE NAME -->       the region between `// [NAME]` and `// [/NAME]` of FILE,
                                            verbatim (FILE is compiled and run by its own test)
    <!-- snippet: skip REASON -->           not compiled, for the reason given (e.g. GPU-only code)

`continues` after the kind puts a snippet in the scope of the file's previous compiled snippet, so
it sees that snippet's declarations. Lines between the comment's first line and `-->` are setup code
the snippet assumes (the variables a fragment uses), compiled before it in the same scope:

    <!-- snippet: statements
    strata::stream stream;
    -->

Snippets of one document share one translation unit, each in its own namespace, with `#line` directives,
so errors point at the document's lines. A document with a `run` snippet is linked and run; the others
are compiled with -fsyntax-only (templates are still instantiated). Exit 1 with the compiler's messages
when a snippet does not compile, fails to run, lacks its comment, or a quote differs from its source.
"""
import argparse
import concurrent.futures
import os
import pathlib
import re
import shlex
import subprocess
import sys

KINDS = ("program", "declarations", "statements", "members", "quote", "skip")
FENCE = re.compile(r"^(\s*)```\s*(cpp|c\+\+)\s*$")
FENCE_END = re.compile(r"^\s*```\s*$")
MARKER = re.compile(r"^\s*<!--\s*snippet:\s*(.*?)\s*(-->)?\s*$")
HEADERS = """#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <random>
#include <span>
#include <vector>

#include <strata/strata.hpp>
#include <strata/attention.hpp>
#include <strata/conv.hpp>
#include <strata/embedding.hpp>
#include <strata/gemm.hpp>
"""


class Snippet:
    def __init__(self, doc, line, body, kind, args, setup, setup_line, above):
        self.doc, self.line, self.body = doc, line, body  # line: the first line of the body (1-based)
        self.kind, self.args, self.setup, self.setup_line = kind, args, setup, setup_line
        self.above = above  # the text line above the snippet and its comment

    def where(self):
        return f"{self.doc}:{self.line - 1}"


def parse(root, doc):
    """The snippets of one document, and the problems found while reading them."""
    lines = (root / doc).read_text().split("\n")
    snippets, problems = [], []
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        start = i
        j = i + 1
        while j < len(lines) and not FENCE_END.match(lines[j]):
            j += 1
        indent = len(m.group(1))
        body = [l[indent:] if l[:indent].strip() == "" else l for l in lines[start + 1:j]]
        # The marker comment: the lines right above the fence, ending with -->.
        k = start - 1
        kind, args, setup, setup_line = None, [], [], 0
        if k >= 0 and lines[k].rstrip().endswith("-->"):
            end = k
            while k >= 0 and not MARKER.match(lines[k]):
                k -= 1
            if k >= 0:
                head = MARKER.match(lines[k])
                words = head.group(1).removesuffix("-->").split()
                kind, args = (words[0], words[1:]) if words else (None, [])
                setup = lines[k + 1:end] if k != end else []
                if k != end and lines[end].strip() != "-->":
                    setup.append(lines[end].rstrip()[:-3])
                setup_line = k + 2
        a = (k if kind is not None else start) - 1
        while a >= 0 and not lines[a].strip():
            a -= 1
        above = lines[a] if a >= 0 else ""
        if kind is None and any(re.search(r"\bint\s+main\s*\(", l) for l in body):
            kind = "program"
        if kind not in KINDS:
            problems.append(f"{doc}:{start + 1}: a ```cpp snippet needs a <!-- snippet: KIND --> comment right above it; "
                            f"the kinds are {', '.join(KINDS)} (docs/api.md)" if kind is None else
                            f"{doc}:{start + 1}: unknown snippet kind '{kind}'; the kinds are {', '.join(KINDS)}")
        else:
            snippets.append(Snippet(doc, start + 2, body, kind, args, setup, setup_line, above))
        i = j + 1
    return snippets, problems


def check_quote(root, s):
    if len(s.args) != 2:
        return [f"{s.where()}: 'quote' takes a file and a marker name, e.g. <!-- snippet: quote examples/x.cpp config -->"]
    path, name = root / s.args[0], s.args[1]
    if not path.is_file():
        return [f"{s.where()}: quotes {s.args[0]}, which does not exist"]
    src = path.read_text().split("\n")
    begin = [n for n, l in enumerate(src) if l.strip() == f"// [{name}]"]
    end = [n for n, l in enumerate(src) if l.strip() == f"// [/{name}]"]
    if len(begin) != 1 or len(end) != 1 or end[0] < begin[0]:
        return [f"{s.where()}: {s.args[0]} needs exactly one '// [{name}]' ... '// [/{name}]' region"]
    region = src[begin[0] + 1:end[0]]
    # "lines A-B" in the sentence that introduces the quote must be the region's lines.
    said = re.search(r"lines (\d+)-(\d+)", s.above)
    if said and (int(said.group(1)), int(said.group(2))) != (begin[0] + 2, end[0]):
        return [f"{s.where()}: the text says lines {said.group(1)}-{said.group(2)}; region '{name}' is lines "
                f"{begin[0] + 2}-{end[0]} of {s.args[0]}"]

    def dedent(block):
        block = [l.rstrip() for l in block]
        while block and not block[-1]:
            block.pop()
        width = min((len(l) - len(l.lstrip()) for l in block if l), default=0)
        return [l[width:] for l in block]

    want, have = dedent(region), dedent(s.body)
    if want == have:
        return []
    for n, (a, b) in enumerate(zip(want, have)):
        if a != b:
            return [f"{s.doc}:{s.line + n}: differs from {s.args[0]}:{begin[0] + 2 + n} (region '{name}'):\n"
                    f"  doc:    {b}\n  source: {a}"]
    return [f"{s.where()}: has {len(have)} lines, region '{name}' of {s.args[0]} has {len(want)}"]


def emit(s, out, scope_open):
    """Appends snippet s to the translation unit `out`; returns the name of a function main must call."""
    def block(lines, first):
        out.append(f'#line {first} "{s.doc}"')
        out.extend(lines)

    name = f"snippet_{s.line}"
    if "continues" not in s.args or not scope_open:
        if scope_open:
            out.append("}")
        out.append(f"namespace {name} {{")
    if s.kind == "declarations":
        if s.setup:
            block(s.setup, s.setup_line)
        block(s.body, s.line)
        return None
    if s.kind == "members":
        out.append(f"struct {name}_members {{")
        if s.setup:
            block(s.setup, s.setup_line)
        block(s.body, s.line)
        out.append("};")
        return None
    out.append(f"inline void {name}() {{")
    if s.setup:
        block(s.setup, s.setup_line)
    block(s.body, s.line)
    out.append("}")
    return name if "run" in s.args else None


def compile_and_run(cmd, exe, cwd):
    r = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    if r.returncode != 0:
        return False, r.stdout + r.stderr
    if exe is None:
        return True, ""
    r = subprocess.run([exe], cwd=cwd, capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        return False, f"{exe} exited with {r.returncode}:\n{r.stdout}{r.stderr}"
    return True, ""


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cxx", default=os.environ.get("CXX", "c++"))
    ap.add_argument("--flags", default="-std=c++20 -Iinclude", help="compile flags (one string)")
    ap.add_argument("--link", default="-lboost_context -pthread", help="link flags (one string)")
    ap.add_argument("--build", default="build/doc-snippets", help="where the generated sources go")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--root", default=str(pathlib.Path(__file__).resolve().parent.parent))
    ap.add_argument("--list", action="store_true", help="print each snippet's kind and stop")
    ap.add_argument("docs", nargs="*")
    a = ap.parse_args()
    root = pathlib.Path(a.root).resolve()
    docs = a.docs or ["README.md"] + sorted(str(p.relative_to(root)) for p in (root / "docs").glob("*.md"))
    build = pathlib.Path(a.build).resolve()
    build.mkdir(parents=True, exist_ok=True)

    problems, jobs, counts = [], [], {k: 0 for k in KINDS}
    for doc in docs:
        snippets, found = parse(root, doc)
        problems += found
        compiled, runs = [], []
        for s in snippets:
            counts[s.kind] += 1
            if a.list:
                print(f"{s.where()}: {s.kind} {' '.join(s.args)}")
            if s.kind == "quote":
                problems += check_quote(root, s)
            elif s.kind == "program":
                stem = build / f"{doc.replace('/', '_').removesuffix('.md')}_{s.line}"
                src = stem.with_suffix(".cpp")
                src.write_text(f'#line {s.line} "{doc}"\n' + "\n".join(s.body) + "\n")
                cmd = [a.cxx, *shlex.split(a.flags), str(src), "-o", str(stem), *shlex.split(a.link)]
                jobs.append((s.where(), cmd, str(stem)))
            elif s.kind != "skip":
                compiled.append(s)
        if not compiled:
            continue
        # A snippet's #include lines go to the top of the unit (a header inside a namespace breaks);
        # blank lines keep the snippet's other lines where #line puts them.
        includes = []
        for s in compiled:
            includes += [l.strip() for l in s.setup + s.body if l.strip().startswith("#include")]
            s.setup = ["" if l.strip().startswith("#include") else l for l in s.setup]
            s.body = ["" if l.strip().startswith("#include") else l for l in s.body]
        out = [f"// Generated from {doc} by scripts/check_doc_snippets.py: its C++ snippets, each in its own scope.",
               HEADERS, *includes]
        open_scope = False
        for s in compiled:
            f = emit(s, out, open_scope)
            open_scope = True
            if f:
                runs.append(f"snippet_{next(x.line for x in reversed(compiled[:compiled.index(s) + 1]) if 'continues' not in x.args)}::{f}")
        out.append("}")
        stem = build / doc.replace("/", "_").removesuffix(".md")
        if runs:
            out.append("int main() {")
            out.extend(f"  {r}();" for r in runs)
            out.append("}")
        src = stem.with_suffix(".cpp")
        src.write_text("\n".join(out) + "\n")
        if runs:
            cmd = [a.cxx, *shlex.split(a.flags), str(src), "-o", str(stem), *shlex.split(a.link)]
            jobs.append((f"{doc} ({len(compiled)} snippets, {len(runs)} run)", cmd, str(stem)))
        else:
            cmd = [a.cxx, *shlex.split(a.flags), "-fsyntax-only", str(src)]
            jobs.append((f"{doc} ({len(compiled)} snippets)", cmd, None))
    if a.list:
        for p in problems:
            print(p, file=sys.stderr)
        return 1 if problems else 0
    with concurrent.futures.ThreadPoolExecutor(max(1, a.jobs)) as pool:
        results = list(pool.map(lambda j: (j[0], *compile_and_run(j[1], j[2], str(root))), jobs))
    for what, ok, log in results:
        print(f"{'ok  ' if ok else 'FAIL'} {what}")
        if not ok:
            problems.append(f"{what}:\n" + "\n".join(log.split("\n")[:80]))
    print("snippets: " + ", ".join(f"{n} {k}" for k, n in counts.items() if n))
    for p in problems:
        print(p, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
