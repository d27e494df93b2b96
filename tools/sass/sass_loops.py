#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The loops of compiled NVIDIA kernels and what they issue: a reading of `cuobjdump -sass` listings.

    tools/sass/sass_loops.py LISTING [--kernel SUBSTRING] [--all-loops] [--json]

For every function of the listing (or those whose mangled name contains SUBSTRING) it finds the loops
(a branch to an address at or before itself: a back-edge; the loop is the address range from the
target to the branch) and prints, per loop, the static instruction count, the tensor-core
instructions (HMMA, HGMMA, IMMA, QGMMA, ...) and the static count per tensor-core instruction, and
the instruction mix in the groups of docs/performance.md ("Without a GPU"): ldmatrix, shared loads
and stores by width, asynchronous copies, barriers, MUFU, integer ALU, branches, local memory. By
default only loops with tensor-core instructions are printed; --all-loops prints every loop.

The counts are static (each instruction in the loop's address range once), so code on a path the
loop rarely takes counts as much as its hot path; that is deliberate: it is what the compiler had to
schedule, and it is what the reviews in ../shared/research compared with CUTLASS (2.9 per HMMA).
Overlapping back-edges (the compiler's loop rotation) give overlapping ranges; each is reported. A
back-edge whose branch cannot be reached from its target inside its range (an out-of-line cold path
jumping back) is not a loop.

Used by tools/sass/check_budgets.py (the `sass` tests) and importable: `functions(text)`,
`loops(body)`, `mix(instructions)`, `summary(...)`.
"""
from __future__ import annotations

import argparse
import collections
import json
import re
import sys

# ---- parsing ------------------------------------------------------------------------------------------
_FUNCTION = re.compile(r'^\s*Function\s*:\s*(\S+)')
_INSTRUCTION = re.compile(r'^\s+/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;')
_PREDICATE = re.compile(r'^@!?U?P[T0-9]+\s+')
_BRANCH = re.compile(r'^(?:BRA|JMP)(?:\.[A-Z.]+)?\s+(?:[^,]*,\s*)?(0x[0-9a-f]+)')


class Instruction(collections.namedtuple('Instruction', 'address text')):
    @property
    def body(self) -> str:
        """The instruction without its guard predicate."""
        return _PREDICATE.sub('', self.text)

    @property
    def never_executes(self) -> bool:
        """`@!PT ...`: guarded by 'not true'; the compiler's padding (counted, it takes an issue slot)."""
        return self.text.startswith('@!PT ')

    @property
    def opcode(self) -> str:
        """The mnemonic with its suffixes, e.g. LDS.U16, HMMA.16816.F32.BF16."""
        return self.body.split()[0] if self.body else ''

    @property
    def branch_target(self):
        m = _BRANCH.match(self.body)
        return int(m.group(1), 16) if m else None


def functions(text: str):
    """(mangled name, [Instruction]) for every function of a cuobjdump -sass / nvdisasm listing."""
    name, body = None, []
    for line in text.splitlines():
        m = _FUNCTION.match(line)
        if m:
            if name:
                yield name, body
            name, body = m.group(1), []
            continue
        m = _INSTRUCTION.match(line)
        if m and name:
            body.append(Instruction(int(m.group(1), 16), m.group(2).strip()))
    if name:
        yield name, body


def without_tail_padding(body):
    """The function without the NOPs ptxas appends after its last instruction to align the next
    function: they are never issued, and their number moves with the code size modulo the alignment
    (a 2-instruction change can add 6 of them), so whole-kernel counts leave them out."""
    end = len(body)
    while end and body[end - 1].opcode == 'NOP':
        end -= 1
    return body[:end]


_NO_FALL_THROUGH = ('BRA', 'JMP', 'BRX', 'JMX', 'EXIT', 'RET', 'KILL')


def _falls_through(ins) -> bool:
    """Whether execution can continue at the next instruction: not after an unconditional jump or exit."""
    guarded = bool(_PREDICATE.match(ins.text)) and not ins.text.startswith('@PT ')
    return guarded or ins.opcode.split('.')[0] not in _NO_FALL_THROUGH


def _reaches(body, index, first, last) -> bool:
    """Whether instruction `last` is reachable from `first` without leaving body[first..last]."""
    seen, work = set(), [first]
    while work:
        i = work.pop()
        if i < first or i > last or i in seen:
            continue
        if i == last:
            return True
        seen.add(i)
        target = body[i].branch_target
        if target is not None and target in index:
            work.append(index[target])
        if _falls_through(body[i]):
            work.append(i + 1)
    return False


def loops(body):
    """(start address, end address, [Instruction]) for every back-edge, in address order of the branch.

    A back-edge is a loop only when its branch can be reached from its target inside the range: ptxas
    places cold paths out of line (the BRA.DIV fallback of a warp shuffle, reached from inside one
    loop) and jumps back from there into the middle of the kernel; such a jump spans code that never
    repeats, and counting it as a loop mixed two real loops into one range."""
    index = {ins.address: i for i, ins in enumerate(body)}
    found = []
    for i, ins in enumerate(body):
        target = ins.branch_target
        if target is None or target > ins.address or target not in index:
            continue
        if not _reaches(body, index, index[target], i):
            continue
        found.append((target, ins.address, body[index[target]:i + 1]))
    return found


# ---- classification -----------------------------------------------------------------------------------
TENSOR = ('HMMA', 'HGMMA', 'IMMA', 'IGMMA', 'QGMMA', 'BMMA', 'BGMMA', 'DMMA', 'OMMA', 'QMMA',
          'UTCHMMA', 'UTCQMMA', 'UTCIMMA', 'UTCOMMA')
INTEGER_ALU = ('IMAD', 'IADD3', 'IADD', 'IADD32I', 'LEA', 'SHF', 'SHL', 'SHR', 'LOP3', 'LOP', 'LOP32I', 'SEL',
               'ISETP', 'IMNMX', 'VIADD', 'VIADDMNMX', 'VIMNMX', 'VIMNMX3', 'IABS', 'POPC', 'FLO', 'BFE', 'BFI',
               'BMSK', 'BREV', 'IDP', 'IMUL', 'XMAD', 'ICMP')
WIDTHS = {'U8': 'narrow', 'S8': 'narrow', 'U16': 'narrow', 'S16': 'narrow', '64': '64', '128': '128'}


def _width(opcode: str) -> str:
    """'narrow' (8/16-bit), '32', '64' or '128' for an LDS/STS opcode."""
    for part in opcode.split('.')[1:]:
        if part in WIDTHS:
            return WIDTHS[part]
    return '32'


def mix(instructions):
    """The groups the budgets are written in, and every opcode (first suffix kept for memory ops)."""
    groups = collections.Counter()
    opcodes = collections.Counter()
    for ins in instructions:
        op = ins.opcode
        base = op.split('.')[0]
        keep = base in ('LDS', 'STS', 'LDG', 'STG', 'LDL', 'STL', 'LDSM')
        opcodes['.'.join(op.split('.')[:2]) if keep else base] += 1
        groups['static'] += 1
        if ins.never_executes:  # padding: an issue slot, but no load, store or math
            groups['padding'] += 1
            continue
        if base in TENSOR:
            groups['tensor'] += 1
        elif base == 'LDSM':
            groups['ldsm'] += 1
        elif base == 'LDS':
            groups['lds'] += 1
            groups['lds_' + _width(op)] += 1
        elif base == 'STS':
            groups['sts'] += 1
            groups['sts_' + _width(op)] += 1
        elif base in ('LDGSTS', 'UBLKCP'):
            groups['async_copy'] += 1
        elif base in ('UTMALDG', 'UTMASTG', 'UTMAPF', 'UTMACCTL'):
            groups['tma'] += 1
        elif base in ('BAR', 'SYNCS'):
            groups['barrier'] += 1
        elif base == 'MUFU':
            groups['mufu'] += 1
        elif base in INTEGER_ALU:
            groups['integer'] += 1
        elif base in ('BRA', 'BRX', 'JMP', 'JMX'):
            groups['branch'] += 1
        elif base in ('LDL', 'STL'):
            groups['local'] += 1
        elif base in ('LDG', 'STG'):
            groups['global'] += 1
        elif base == 'SHFL':
            groups['shuffle'] += 1
        elif base == 'PRMT':
            groups['permute'] += 1
    return groups, opcodes


def per_tensor(groups) -> float | None:
    """Static instructions per tensor-core instruction (None without tensor-core instructions)."""
    return groups['static'] / groups['tensor'] if groups['tensor'] else None


def summary(name, start, end, instructions):
    groups, opcodes = mix(instructions)
    ratio = per_tensor(groups)
    return {'function': name, 'start': hex(start), 'end': hex(end), 'static': groups['static'],
            'tensor': groups['tensor'], 'per_tensor': None if ratio is None else round(ratio, 2),
            'groups': dict(sorted(groups.items())), 'opcodes': dict(opcodes.most_common())}


def main_loop(body):
    """The loop with the most tensor-core instructions (ties: the smaller one), or None."""
    best = None
    for start, end, ins in loops(body):
        groups, _ = mix(ins)
        if not groups['tensor']:
            continue
        key = (groups['tensor'], -len(ins))
        if best is None or key > best[0]:
            best = (key, start, end, ins)
    return None if best is None else best[1:]


def inner_loops(start, end, body):
    """Back-edges strictly inside the loop [start, end]: loops nested in it. Where there are any, its
    static count under-states what it executes (a nested body runs many times, counted once)."""
    return sum(1 for s, e, _ in loops(body) if start <= s and e < end)


def loop_union(body):
    """Every instruction inside at least one loop, once (for 'no local memory in any loop')."""
    inside = set()
    for _, _, ins in loops(body):
        inside.update(i.address for i in ins)
    return [i for i in body if i.address in inside]


# ---- command line (also gcn_loops.py's) ---------------------------------------------------------------
NVIDIA_KEYS = ('ldsm', 'lds', 'lds_narrow', 'lds_32', 'lds_64', 'lds_128', 'sts', 'sts_narrow', 'sts_32', 'sts_64',
               'sts_128', 'async_copy', 'tma', 'barrier', 'mufu', 'integer', 'branch', 'local', 'global', 'shuffle',
               'permute', 'padding')


def print_loop(where, s, unit, keys):
    """One loop's summary as text: its static and tensor-core counts, then the groups named in keys."""
    ratio = 'n/a' if s['per_tensor'] is None else f"{s['per_tensor']:.2f}"
    print(f"  loop {where}: {s['static']} static, {s['tensor']} {unit}, {ratio} per {unit}")
    g = s['groups']
    print('    ' + '  '.join(f'{k} {g[k]}' for k in keys if g.get(k)))


def cli(argv, description, listing_help, unit, keys, functions_of, show_empty=False):
    """The command line of a listing reader: functions_of(text) yields (name, heading, [(where, summary)])
    for every function; loops without tensor-core instructions are left out unless --all-loops, and a
    function left with none is not printed unless show_empty (its heading carries figures of its own)."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument('listing', help=listing_help)
    ap.add_argument('--kernel', default='', help='only functions whose mangled name contains this')
    ap.add_argument('--all-loops', action='store_true', help=f'also loops without {unit} instructions')
    ap.add_argument('--json', action='store_true', help='one JSON object per loop')
    a = ap.parse_args(argv)
    text = sys.stdin.read() if a.listing == '-' else open(a.listing).read()
    for name, heading, found in functions_of(text):
        if a.kernel not in name:
            continue
        found = [(w, f) for w, f in found if a.all_loops or f['tensor']]
        if a.json:
            for _, f in found:
                print(json.dumps(f))
            continue
        if not found and not show_empty:
            continue
        print(heading)
        for where, f in found:
            print_loop(where, f, unit, keys)
    return 0


def main(argv=None):
    def functions_of(text):
        for name, body in functions(text):
            yield name, name[:160], [(f'{s:#x}..{e:#x}', summary(name, s, e, ins)) for s, e, ins in loops(body)]
    return cli(argv, __doc__.split('\n\n')[0], 'cuobjdump -sass (or nvdisasm) output; - for stdin', 'tensor-core',
               NVIDIA_KEYS, functions_of)


if __name__ == '__main__':
    sys.exit(main())
