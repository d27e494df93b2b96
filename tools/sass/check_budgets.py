#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Compile one translation unit for one GPU target and hold its kernels' machine code to a budget file.

    tools/sass/check_budgets.py --nvcc NVCC --cuobjdump CUOBJDUMP --target sm_90a \\
        --source test/sass/gemm.cu --include include --budgets test/sass/budgets.txt \\
        [--work DIR] [--report FILE] [--extra-flags "..."] [--expect-failure]
    tools/sass/check_budgets.py --hipcc HIPCC --target gfx940 --source test/sass/gemm_cdna.cu ...

This is the `sass` test (test/sass/CMakeLists.txt, `ctest -L sass`). It compiles SOURCE with the
compile tests' flags, disassembles it with cuobjdump -sass, finds each kernel named in the budget file
(a struct `sass_...` that the source launches), measures it with tools/sass/sass_loops.py and compares
every budget line of this source and target. It fails (exit 1) when a measurement is over (or under,
for `>=` lines) its budget, printing the whole instruction mix of that loop; when a kernel of the
budget file is missing from the SASS; or when the source defines a `sass_` kernel without a budget.
Exit 77 (skip) when nvcc or cuobjdump is missing, naming what to install.

AMD targets (gfx...) compile with hipcc to GCN assembly (`--cuda-device-only -S`) and are read by
tools/sass/gcn_loops.py instead: the same scopes and groups (tensor = v_mfma), with LLVM's own loop
analysis from the assembly's comments, and the kernel figures registers (VGPRs + AGPRs), vgprs,
agprs, sgprs, occupancy (waves per SIMD; use >=), spills (registers spilled) and stack_bytes (scratch).
The source is compiled with -DSTRATA_COMPILE_TARGET=<descriptor>: gfx940 stands for gfx942 (Debian's
clang 15 predates gfx942; test/compile does the same).

Budget file: one line per check, `#` starts a comment,
    source  target  kernel  scope  metric  op  budget  goal
  source   the .cu file's stem under test/sass (gemm, attention, ...)
  scope    mainloop  the loop with the most tensor-core instructions
           largest   the loop with the most instructions
           loops     every instruction inside any loop, once
           kernel    the whole function (without the alignment NOPs after it); also the ptxas figures registers, spill_bytes, stack_bytes
  metric   static, tensor, per_tensor (static per tensor-core instruction), or a group of
           sass_loops.mix: ldsm, lds, lds_narrow, lds_32, lds_64, lds_128, sts, sts_narrow, ...,
           async_copy, tma, barrier, mufu, integer, branch, local, global, shuffle, permute, padding;
           inner_loops (mainloop, largest): loops nested in it, whose bodies its static count
           under-states (0 makes static = executed, but for branches)
  op       <= (the measurement may not exceed the budget) or >= (may not fall below it)
  goal     where the kernel issues want the number (informational; `-` for none)
A line `compiler nvcc X.Y` (or `compiler hipcc X.Y`: clang's version) names the compiler the budgets
were measured with. Under another version
the numbers move a little with the compiler, so the budgets get 10 % of slack and the test says so.

The SASS of a compile is kept in ~/.cache/strata/sass (STRATA_SASS_CACHE; `off` disables it) keyed by
the compiler, the command line and the contents of the source and of every header under --include,
so an unchanged tree re-checks in a second.
"""
from __future__ import annotations

import argparse
import hashlib
import os
import pathlib
import re
import shlex
import subprocess
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import gcn_loops  # noqa: E402
import sass_loops  # noqa: E402

SKIP = 77
SLACK_OTHER_COMPILER = 0.10
KERNEL_METRICS = ('registers', 'spill_bytes', 'stack_bytes', 'vgprs', 'agprs', 'sgprs', 'occupancy', 'spills')
# The arch descriptor (strata::arch::X) each AMD target is compiled with (see the docstring).
GCN_DESCRIPTOR = {'gfx940': 'gfx942', 'gfx941': 'gfx942'}


def is_gcn(target):
    return target.startswith('gfx')


class Budget:
    def __init__(self, line_no, fields):
        (self.source, self.target, self.kernel, self.scope, self.metric, self.op, budget, goal) = fields
        self.line_no = line_no
        self.budget = float(budget)
        self.goal = None if goal == '-' else float(goal)
        if self.op not in ('<=', '>='):
            raise ValueError(f'op must be <= or >=, got {self.op!r}')
        if self.scope not in ('mainloop', 'largest', 'loops', 'kernel'):
            raise ValueError(f'scope must be mainloop, largest, loops or kernel, got {self.scope!r}')
        if self.metric in KERNEL_METRICS and self.scope != 'kernel':
            raise ValueError(f'{self.metric} is a ptxas figure: use scope kernel')


def read_budgets(path):
    """(budgets, {compiler name: version}) of the file."""
    budgets, compiler = [], {}
    for n, raw in enumerate(open(path), 1):
        line = raw.split('#', 1)[0].strip()
        if not line:
            continue
        fields = line.split()
        if fields[0] == 'compiler':
            if len(fields) != 3:
                sys.exit(f'{path}:{n}: expected `compiler nvcc|hipcc VERSION`')
            compiler[fields[1]] = fields[2]
            continue
        if len(fields) != 8:
            sys.exit(f'{path}:{n}: expected 8 fields (source target kernel scope metric op budget goal), got {len(fields)}')
        try:
            budgets.append(Budget(n, fields))
        except ValueError as e:
            sys.exit(f'{path}:{n}: {e}')
    return budgets, compiler


def compiler_version(compiler, pattern, what):
    """'X.Y' from `compiler --version` (pattern: two groups, major and minor)."""
    out = subprocess.run([compiler, '--version'], capture_output=True, text=True).stdout
    m = re.search(pattern, out)
    if not m:
        sys.exit(f"'{compiler} --version' did not report {what}:\n{out}")
    return f'{m.group(1)}.{m.group(2)}'


def cache_entry(a, tool_key, command, work):
    """The cache folder for this compile (None when the cache is off): keyed by the compiler, the
    command line and the contents of the source and of every header under --include."""
    cache = os.environ.get('STRATA_SASS_CACHE') or os.path.join(os.path.expanduser('~'), '.cache', 'strata', 'sass')
    if cache in ('off', 'OFF', '0'):
        return None
    h = hashlib.sha256()
    key_command = ' '.join(command).replace(str(work), '<work>').replace(str(pathlib.Path(a.include).parent), '<checkout>')
    h.update(f'{tool_key}|{key_command}'.encode())
    for path in [pathlib.Path(a.source)] + sorted(pathlib.Path(a.include).rglob('*.hpp')):
        h.update(str(path.relative_to(pathlib.Path(a.include).parent) if path.is_relative_to(pathlib.Path(a.include).parent) else path).encode())
        h.update(path.read_bytes())
    return pathlib.Path(cache) / f'{pathlib.Path(a.source).stem}-{a.target}-{h.hexdigest()[:24]}'


def store_entry(a, entry, files):
    if not entry:
        return
    for stale in entry.parent.glob(f'{pathlib.Path(a.source).stem}-{a.target}-*'):
        for f in stale.iterdir():
            f.unlink()
        stale.rmdir()
    entry.mkdir(parents=True)
    for name, content in files.items():
        (entry / name).write_text(content)
    (entry / 'done').write_text('')


def compile_gcn(a, version, work):
    """The GCN assembly of the source for an AMD target, from the cache when its inputs are unchanged."""
    descriptor = GCN_DESCRIPTOR.get(a.target, a.target)
    out = work / (pathlib.Path(a.source).stem + '.s')
    command = [a.hipcc, '-std=c++20', '-O3', f'-I{a.include}', f'-DSTRATA_COMPILE_TARGET={descriptor}',
               f'--offload-arch={a.target}', '--cuda-device-only', '-S', *shlex.split(a.extra_flags), '-x', 'hip',
               a.source, '-o', str(out)]
    entry = cache_entry(a, f'hipcc {version}|{a.hipcc}', command, work)
    if entry and (entry / 'done').exists():
        print(f'assembly from the cache {entry} (inputs unchanged)')
        return (entry / 'asm').read_text()
    print('compiling: ' + ' '.join(shlex.quote(c) for c in command), flush=True)
    r = subprocess.run(command, capture_output=True, text=True, cwd=work)
    if r.returncode != 0:
        print(r.stdout + r.stderr)
        sys.exit(f'the compile failed (exit {r.returncode})')
    text = out.read_text()
    store_entry(a, entry, {'asm': text})
    return text


def compile_and_disassemble(a, version, work):
    """(SASS listing, ptxas -v report) of the source, from the cache when its inputs are unchanged."""
    arch = a.target.replace('sm_', '')
    descriptor = a.target.replace('_', '')
    obj = work / (pathlib.Path(a.source).stem + '.o')
    command = [a.nvcc, '-std=c++20', '-O3', f'-I{a.include}', f'-DSTRATA_COMPILE_TARGET={descriptor}',
               '-diag-error', '20011,20013,20014,20015', '-gencode', f'arch=compute_{arch},code=sm_{arch}', '-Xptxas', '-v',
               *shlex.split(a.extra_flags), '-x', 'cu', '-c', a.source, '-o', str(obj)]
    entry = cache_entry(a, f'nvcc {version}|{a.nvcc}|{a.cuobjdump}', command, work)
    if entry and (entry / 'done').exists():
        print(f'SASS from the cache {entry} (inputs unchanged)')
        return (entry / 'sass').read_text(), (entry / 'ptxas').read_text()
    print('compiling: ' + ' '.join(shlex.quote(c) for c in command), flush=True)
    r = subprocess.run(command, capture_output=True, text=True, cwd=work)
    if r.returncode != 0:
        print(r.stdout + r.stderr)
        sys.exit(f'the compile failed (exit {r.returncode})')
    # cuobjdump runs nvdisasm, which the PyPI wheels install beside it rather than on the PATH.
    env = dict(os.environ, PATH=os.path.dirname(a.cuobjdump) + os.pathsep + os.environ.get('PATH', ''))
    d = subprocess.run([a.cuobjdump, '-sass', str(obj)], capture_output=True, text=True, env=env)
    if d.returncode != 0:
        print(d.stdout + d.stderr)
        sys.exit(f'cuobjdump failed (exit {d.returncode})')
    ptxas = r.stdout + r.stderr
    store_entry(a, entry, {'sass': d.stdout, 'ptxas': ptxas})
    return d.stdout, ptxas


def ptxas_figures(report):
    """mangled name -> {registers, spill_bytes, stack_bytes} from nvcc -Xptxas -v."""
    figures, current = {}, None
    for line in report.splitlines():
        m = re.search(r"Function properties for (\S+)", line)
        if m:
            current = figures.setdefault(m.group(1), {})
            continue
        m = re.search(r'(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads', line)
        if m and current is not None:
            current['stack_bytes'] = int(m.group(1))
            current['spill_bytes'] = int(m.group(2)) + int(m.group(3))
            continue
        m = re.search(r'Compiling entry function .(\S+?). for', line)
        if m:
            current = figures.setdefault(m.group(1), {})
            continue
        m = re.search(r'Used (\d+) registers', line)
        if m and current is not None:
            current['registers'] = int(m.group(1))
    return figures


def kernel_pattern(kernel):
    """The struct's name as it appears in a mangled name (length-prefixed, so a_b does not match a_b_c)."""
    return re.compile(rf'(?<!\d){len(kernel)}{re.escape(kernel)}')


def measure(scope, body):
    """(groups, description, instructions) of a scope of one function's body."""
    if scope == 'mainloop':
        found = sass_loops.main_loop(body)
        if not found:
            return None, 'no loop with tensor-core instructions', []
        start, end, ins = found
        groups = sass_loops.mix(ins)[0]
        groups['inner_loops'] = sass_loops.inner_loops(start, end, body)
        return groups, f'loop {start:#x}..{end:#x}', ins
    if scope == 'largest':
        all_loops = sass_loops.loops(body)
        if not all_loops:
            return None, 'no loop', []
        start, end, ins = max(all_loops, key=lambda l: len(l[2]))
        groups = sass_loops.mix(ins)[0]
        groups['inner_loops'] = sass_loops.inner_loops(start, end, body)
        return groups, f'loop {start:#x}..{end:#x}', ins
    ins = sass_loops.loop_union(body) if scope == 'loops' else sass_loops.without_tail_padding(body)
    return sass_loops.mix(ins)[0], ('every loop' if scope == 'loops' else 'whole kernel'), ins


def measure_gcn(scope, function):
    """measure() for an AMD kernel (a gcn_loops.Function)."""
    if scope == 'mainloop':
        found = gcn_loops.main_loop(function)
        if not found:
            return None, 'no loop with matrix-core instructions', []
        header, ins = found
        groups = gcn_loops.mix(ins)[0]
        groups['inner_loops'] = function.nested_in(header)
        return groups, f'loop {header}', ins
    if scope == 'largest':
        all_loops = function.loops()
        if not all_loops:
            return None, 'no loop', []
        header, _, ins = max(all_loops, key=lambda l: len(l[2]))
        groups = gcn_loops.mix(ins)[0]
        groups['inner_loops'] = function.nested_in(header)
        return groups, f'loop {header}', ins
    ins = gcn_loops.loop_union(function) if scope == 'loops' else function.instructions()
    return gcn_loops.mix(ins)[0], ('every loop' if scope == 'loops' else 'whole kernel'), ins


def value_of(metric, groups, figures):
    if metric in KERNEL_METRICS:
        return figures.get(metric)
    if metric == 'per_tensor':  # as printed: two decimals
        ratio = sass_loops.per_tensor(groups)
        return None if ratio is None else round(ratio, 2)
    return groups.get(metric, 0)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--nvcc', default='')
    ap.add_argument('--cuobjdump', default='')
    ap.add_argument('--hipcc', default='', help='for AMD targets (gfx...)')
    ap.add_argument('--target', required=True, help='sm_80, sm_90a, ..., gfx90a, gfx940')
    ap.add_argument('--source', required=True)
    ap.add_argument('--include', required=True)
    ap.add_argument('--budgets', required=True)
    ap.add_argument('--work', default='', help='scratch folder (default: a folder beside the cache)')
    ap.add_argument('--report', default='', help='write the measured table (markdown) here')
    ap.add_argument('--extra-flags', default='', help='more nvcc flags (the probe plants a regression so)')
    ap.add_argument('--expect-failure', action='store_true',
                    help='pass only when a budget is exceeded (the probe: shows that the check can fail)')
    a = ap.parse_args(argv)
    a.source = str(pathlib.Path(a.source).resolve())  # the compile runs in the scratch folder
    a.include = str(pathlib.Path(a.include).resolve())

    gcn = is_gcn(a.target)
    if gcn and (not a.hipcc or not os.path.exists(a.hipcc)):
        print('SKIP: hipcc not found; `apt-get install hipcc` (Debian 12: clang 15 HIP) to check the AMD kernels')
        return SKIP
    if not gcn and (not a.nvcc or not os.path.exists(a.nvcc)):
        print('SKIP: nvcc not found; install the CUDA toolkit to run the sass tests')
        return SKIP
    if not gcn and (not a.cuobjdump or not os.path.exists(a.cuobjdump)):
        print('SKIP: cuobjdump not found; scripts/test installs it into build/sass-tools (pip: nvidia-cuda-cuobjdump '
              'and nvidia-cuda-nvdisasm), or put a CUDA toolkit with cuobjdump on the PATH and reconfigure')
        return SKIP
    stem = pathlib.Path(a.source).stem
    budgets, budget_compiler = read_budgets(a.budgets)
    mine = [b for b in budgets if b.source == stem and b.target == a.target]
    if not mine:
        sys.exit(f'{a.budgets} has no budget for source {stem} on {a.target}')
    tool = 'hipcc' if gcn else 'nvcc'
    version = (compiler_version(a.hipcc, r'clang version (\d+)\.(\d+)', 'a clang version') if gcn else
               compiler_version(a.nvcc, r'release (\d+)\.(\d+)', 'a release'))
    slack = 0.0
    if tool in budget_compiler and budget_compiler[tool] != version:
        slack = SLACK_OTHER_COMPILER
        print(f'note: the budgets were measured with {tool} {budget_compiler[tool]}, this is {tool} {version}: '
              f'{slack:.0%} of slack on every budget')

    work = pathlib.Path(a.work) if a.work else pathlib.Path(os.path.expanduser('~')) / '.cache' / 'strata' / 'sass-work' / f'{stem}-{a.target}'
    work.mkdir(parents=True, exist_ok=True)
    if gcn:
        functions = dict(gcn_loops.functions(compile_gcn(a, version, work)))
        figures = {n: f.figures for n, f in functions.items()}
    else:
        text, ptxas = compile_and_disassemble(a, version, work)
        functions = dict(sass_loops.functions(text))
        figures = ptxas_figures(ptxas)

    failures, rows, errors = [], [], []
    # Every sass_ kernel of the source has a budget; every budgeted kernel is in the SASS.
    budgeted = {b.kernel for b in mine}
    defined = set(re.findall(r'^struct\s+(sass_\w+)', pathlib.Path(a.source).read_text(), re.M))
    for k in sorted(defined - budgeted):
        errors.append(f'kernel {k} is defined in {stem}.cu but has no budget for {a.target} in {a.budgets}')
    for b in mine:
        pattern = kernel_pattern(b.kernel)
        names = [n for n in functions if pattern.search(n)]
        if len(names) != 1:
            errors.append(f'{a.budgets}:{b.line_no}: kernel {b.kernel}: {len(names)} functions in the SASS of {stem}.cu for {a.target} (expected 1)')
            continue
        name = names[0]
        groups, where, ins = measure_gcn(b.scope, functions[name]) if gcn else measure(b.scope, functions[name])
        fig = next((f for n, f in figures.items() if pattern.search(n)), {})
        if groups is None:
            errors.append(f'{a.budgets}:{b.line_no}: {b.kernel} {b.scope}: {where}')
            continue
        value = value_of(b.metric, groups, fig)
        if value is None:
            errors.append(f'{a.budgets}:{b.line_no}: {b.kernel}: no {b.metric} figure (per_tensor without tensor-core '
                          'instructions, or ptxas did not report it)')
            continue
        limit = b.budget * (1 + slack) if b.op == '<=' else b.budget * (1 - slack)
        ok = value <= limit + 1e-9 if b.op == '<=' else value >= limit - 1e-9
        shown = f'{value:.2f}' if isinstance(value, float) else str(value)
        goal = '-' if b.goal is None else f'{b.goal:g}'
        rows.append((b.kernel, b.scope, where, b.metric, shown, f'{b.op} {b.budget:g}', goal, 'ok' if ok else 'OVER BUDGET'))
        if not ok:
            failures.append((b, shown, name, where, ins))

    width = [max(len(str(r[i])) for r in rows + [('kernel', 'scope', 'where', 'metric', 'measured', 'budget', 'goal', '')])
             for i in range(8)]
    header = ('kernel', 'scope', 'where', 'metric', 'measured', 'budget', 'goal', '')
    print(f'{"Assembly" if gcn else "SASS"} budgets of {stem}.cu on {a.target} ({tool} {version}, {a.budgets}):')
    for r in [header] + rows:
        print('  ' + '  '.join(str(c).ljust(width[i]) for i, c in enumerate(r)).rstrip())
    if a.report:
        with open(a.report, 'w') as f:
            f.write(f'| kernel ({a.target}, {tool} {version}) | scope | metric | measured | budget | goal |\n|---|---|---|---:|---:|---:|\n')
            for r in rows:
                f.write(f'| {r[0]} | {r[1]} | {r[3]} | {r[4]} | {r[5]} | {r[6]} |\n')
    for b, shown, name, where, ins in failures:
        print(f'\nOVER BUDGET: {b.kernel} {b.scope} ({where}) {b.metric} = {shown}, budget {b.op} {b.budget:g} '
              f'({a.budgets}:{b.line_no}); the mix:')
        s = (gcn_loops.summary(name, where, ins) if gcn else
             sass_loops.summary(name, ins[0].address if ins else 0, ins[-1].address if ins else 0, ins))
        print('  groups: ' + ', '.join(f'{k} {v}' for k, v in s['groups'].items()))
        print('  opcodes: ' + ', '.join(f'{k} {v}' for k, v in s['opcodes'].items()))
    for e in errors:
        print('ERROR: ' + e)
    if errors:
        return 1
    if a.expect_failure:
        if failures:
            print(f'\nprobe passed: the planted regression ({a.extra_flags}) is over {len(failures)} budget(s)')
            return 0
        print(f'\nprobe FAILED: the planted regression ({a.extra_flags}) stayed within every budget, so the check cannot see it')
        return 1
    if failures:
        print(f'\n{len(failures)} budget(s) exceeded. If the change is an improvement elsewhere that costs here, say so '
              'in the commit and raise the budget; if a budget is beaten, lower it to the new value (test/sass/budgets.txt).')
        return 1
    print(f'all {len(rows)} budgets met')
    return 0


if __name__ == '__main__':
    sys.exit(main())
