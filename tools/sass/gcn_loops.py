#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The loops of compiled AMD kernels and what they issue: a reading of LLVM's GCN assembly (the device
`.s` of `hipcc --cuda-device-only -S`), the counterpart of sass_loops.py for the MFMA kernels.

    tools/sass/gcn_loops.py LISTING.s [--kernel SUBSTRING] [--all-loops] [--json]

LLVM writes its loop analysis into the assembly: every basic block's label carries `in Loop:
Header=BBx Depth=d`, a loop header `=>This Loop Header` (or `Inner Loop Header`) and the headers of
the loops around it (`Parent Loop BBx`). A loop here is that: the blocks whose innermost loop is its
header or a loop nested in it, wherever the compiler placed them (out-of-line blocks included), so
no back-edge guessing is needed. Per loop it prints the static instruction count, the matrix-core
instructions (v_mfma, v_smfmac) and the static count per matrix-core instruction, and the mix in the
groups that sass_loops.py uses where AMD has the same thing (shared-memory reads `lds` by width:
narrow = 8/16-bit, 32, 64 = b64 or read2_b32, 128 = b128 or read2_b64; shared stores `sts`; global
memory; barriers; branches; integer ALU; scratch memory as `local`; cross-lane as `shuffle`), plus
`acc_moves` (v_accvgpr_read/write/mov: accumulators moved between AGPRs and VGPRs), `waitcnt` and
`scalar` (the other s_ instructions). Counts are static, as in sass_loops.py.

Kernel figures from the `; Kernel info` block and the metadata after each function: registers
(TotalNumVgprs: VGPRs + AGPRs, what sets the waves per SIMD), vgprs, agprs, sgprs, occupancy (waves
per SIMD), spills (VGPRs + SGPRs spilled), stack_bytes (ScratchSize).

Used by tools/sass/check_budgets.py (the `sass` tests of gfx targets) and importable: `functions(text)`
gives (name, Function) with `.blocks`, `.loops()`, `.figures`; `mix(instructions)`, `summary(...)`
(per tensor-core instruction as sass_loops.per_tensor).
"""
from __future__ import annotations

import collections
import pathlib
import re
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import sass_loops  # noqa: E402  (per_tensor and the command line are shared)

_FUNCTION = re.compile(r'^(_Z\w+|[A-Za-z_]\w*):\s*(?:;.*)?$')
_BLOCK = re.compile(r'^(\.LBB\d+_\d+|; %bb\.\d+):\s*(.*)$')
_IN_LOOP = re.compile(r'in Loop: Header=(BB\d+_\d+) Depth=(\d+)')
_HEADER = re.compile(r'=>\s*This (?:Inner )?Loop Header: Depth=(\d+)')
_PARENT = re.compile(r'Parent Loop (BB\d+_\d+) Depth=(\d+)')
_INFO = re.compile(r'^; (NumSgprs|NumVgprs|NumAgprs|TotalNumVgprs|ScratchSize|Occupancy): (\d+)')
_META = re.compile(r'^\s+\.(name|vgpr_spill_count|sgpr_spill_count):\s+(\S+)')


class Instruction(collections.namedtuple('Instruction', 'line text')):
    @property
    def opcode(self) -> str:
        return self.text.split()[0] if self.text else ''


class Block:
    def __init__(self, label, line):
        self.label = label[2:] if label.startswith('.L') else label  # LLVM's comments say BB0_72 for .LBB0_72
        self.line = line
        self.header = None     # innermost loop header (itself for a header), or None outside loops
        self.depth = 0
        self.parents = {}      # depth -> header of the loop around it at that depth (headers only)
        self.instructions = []


class Function:
    def __init__(self, name):
        self.name = name
        self.blocks = []
        self.figures = {}

    def instructions(self):
        return [i for b in self.blocks for i in b.instructions]

    def loops(self):
        """(header, depth, [Instruction]) for every loop, outermost first; a loop's instructions are
        those of its blocks and of every loop nested in it, in layout order."""
        parent = {}
        depth = {}
        for b in self.blocks:
            if b.header == b.label:
                depth[b.label] = b.depth
                parent[b.label] = b.parents.get(b.depth - 1)

        def chain(h):
            while h is not None:
                yield h
                h = parent.get(h)

        members = collections.defaultdict(list)
        for b in self.blocks:
            if b.header is None:
                continue
            for h in chain(b.header):
                members[h].extend(b.instructions)
        order = sorted(depth, key=lambda h: (depth[h], next(i for i, b in enumerate(self.blocks) if b.label == h)))
        return [(h, depth[h], sorted(members[h], key=lambda i: i.line)) for h in order]

    def nested_in(self, header):
        """Loops strictly inside the loop `header`."""
        parent = {b.label: b.parents.get(b.depth - 1) for b in self.blocks if b.header == b.label}
        count = 0
        for h in parent:
            p = parent[h]
            while p is not None:
                if p == header:
                    count += 1
                    break
                p = parent.get(p)
        return count


def functions(text: str):
    """(name, Function) for every function of the listing, in order."""
    found = []
    current, block = None, None
    by_name = {}
    meta_name = None
    for n, line in enumerate(text.splitlines(), 1):
        m = _FUNCTION.match(line)
        if m and not line.startswith('.'):
            current = Function(m.group(1))
            found.append(current)
            by_name[current.name] = current
            block = Block('entry', n)
            current.blocks.append(block)
            continue
        if current is None:
            m = _META.match(line)
            if m:
                if m.group(1) == 'name':
                    meta_name = m.group(2)
                elif meta_name in by_name:
                    f = by_name[meta_name].figures
                    f['spills'] = f.get('spills', 0) + int(m.group(2))
            continue
        if line.startswith('.Lfunc_end'):
            block = None
            continue
        m = _INFO.match(line)
        if m:
            key = {'NumSgprs': 'sgprs', 'NumVgprs': 'vgprs', 'NumAgprs': 'agprs', 'TotalNumVgprs': 'registers',
                   'ScratchSize': 'stack_bytes', 'Occupancy': 'occupancy'}[m.group(1)]
            current.figures[key] = int(m.group(2))
            if m.group(1) == 'Occupancy':
                current = None  # the kernel info is the last thing of a function
            continue
        if block is None:
            continue
        m = _BLOCK.match(line)
        if m:
            block = Block(m.group(1), n)
            current.blocks.append(block)
            _read_loop_comment(block, m.group(2))
            continue
        stripped = line.strip()
        if stripped.startswith(';') and not block.instructions:
            _read_loop_comment(block, stripped)  # continuation lines of the label's comment
            continue
        if not stripped or stripped.startswith((';', '.')) or not line[:1].isspace():
            continue
        text_ = stripped.split(';', 1)[0].strip()
        if text_:
            block.instructions.append(Instruction(n, text_))
    for f in found:
        f.figures.setdefault('spills', 0)
    return [(f.name, f) for f in found]


def _read_loop_comment(block, comment):
    m = _IN_LOOP.search(comment)
    if m:
        block.header, block.depth = m.group(1), int(m.group(2))
    m = _HEADER.search(comment)
    if m:
        block.header, block.depth = block.label, int(m.group(1))
    for m in _PARENT.finditer(comment):
        block.parents[int(m.group(2))] = m.group(1)


# ---- classification -----------------------------------------------------------------------------------
INTEGER_PREFIXES = ('v_add_u32', 'v_add_co_u32', 'v_addc_co_u32', 'v_sub_u32', 'v_sub_co_u32', 'v_subrev',
                    'v_add3_u32', 'v_lshl_add_u32', 'v_add_lshl_u32', 'v_lshl_or_b32', 'v_and_or_b32', 'v_or3_b32',
                    'v_lshlrev', 'v_lshrrev', 'v_ashrrev', 'v_and_b32', 'v_or_b32', 'v_xor_b32', 'v_not_b32',
                    'v_mad_u32_u24', 'v_mad_u64_u32', 'v_mad_i64_i32', 'v_mul_lo_u32', 'v_mul_hi_u32', 'v_mul_u32_u24',
                    'v_bfe_u32', 'v_bfe_i32', 'v_bfi_b32', 'v_cmp_', 'v_cndmask_b32', 'v_min_u32', 'v_max_u32',
                    'v_min_i32', 'v_max_i32', 'v_lshl_b64', 'v_lshlrev_b64', 'v_mov_b32', 'v_mov_b64')
LDS_WIDTH = {'u8': 'narrow', 'i8': 'narrow', 'u16': 'narrow', 'i16': 'narrow', 'u8_d16': 'narrow',
             'u16_d16': 'narrow', 'u8_d16_hi': 'narrow', 'u16_d16_hi': 'narrow', 'i8_d16': 'narrow',
             'i8_d16_hi': 'narrow', 'b8': 'narrow', 'b16': 'narrow', 'b8_d16_hi': 'narrow', 'b16_d16_hi': 'narrow',
             'b32': '32', 'b64': '64', 'b96': '128', 'b128': '128', '2_b32': '64', '2st64_b32': '64',
             '2_b64': '128', '2st64_b64': '128'}
MUFU = ('v_exp_f32', 'v_log_f32', 'v_rcp_f32', 'v_rsq_f32', 'v_sqrt_f32', 'v_sin_f32', 'v_cos_f32', 'v_exp_f16',
        'v_rcp_f16', 'v_log_f16', 'v_rcp_iflag_f32')


def _lds_width(opcode: str) -> str:
    """'narrow', '32', '64' or '128' for a ds_read*/ds_write* opcode."""
    for prefix in ('ds_read', 'ds_write'):
        if opcode.startswith(prefix):
            return LDS_WIDTH.get(opcode[len(prefix):].lstrip('_'), '32')
    return '32'


def mix(instructions):
    """The groups the budgets are written in, and every opcode."""
    groups = collections.Counter()
    opcodes = collections.Counter()
    for ins in instructions:
        op = ins.opcode
        opcodes[op] += 1
        groups['static'] += 1
        if op.startswith(('v_mfma', 'v_smfmac')):
            groups['tensor'] += 1
        elif op.startswith('ds_read') and not op.startswith('ds_read_addtid'):
            groups['lds'] += 1
            groups['lds_' + _lds_width(op)] += 1
        elif op.startswith('ds_write'):
            groups['sts'] += 1
            groups['sts_' + _lds_width(op)] += 1
        elif op.startswith(('ds_bpermute', 'ds_permute', 'ds_swizzle')) or '_dpp' in op:
            groups['shuffle'] += 1
        elif op.startswith(('global_load_lds', 'buffer_load')) and ' lds' in ins.text:
            groups['async_copy'] += 1
        elif op.startswith(('scratch_', 'buffer_')) and ('scratch' in op or 'off, s[0:3]' in ins.text):
            groups['local'] += 1
        elif op.startswith(('global_', 'buffer_', 'flat_')):
            groups['global'] += 1
        elif op.startswith('v_accvgpr_'):
            groups['acc_moves'] += 1
        elif op == 's_barrier':
            groups['barrier'] += 1
        elif op.startswith('s_waitcnt'):
            groups['waitcnt'] += 1
        elif op == 's_nop':
            groups['padding'] += 1
        elif op.startswith(('s_branch', 's_cbranch', 's_setpc', 's_swappc')):
            groups['branch'] += 1
        elif op.startswith('s_'):
            groups['scalar'] += 1
        elif op.startswith(MUFU):
            groups['mufu'] += 1
        elif op.startswith(('v_perm_b32', 'v_alignbit_b32', 'v_alignbyte_b32', 'v_pack_b32')):
            groups['permute'] += 1
        elif op.startswith(INTEGER_PREFIXES):
            groups['integer'] += 1
    return groups, opcodes


def summary(name, header, instructions):
    groups, opcodes = mix(instructions)
    ratio = sass_loops.per_tensor(groups)
    return {'function': name, 'loop': header, 'static': groups['static'], 'tensor': groups['tensor'],
            'per_tensor': None if ratio is None else round(ratio, 2), 'groups': dict(sorted(groups.items())),
            'opcodes': dict(opcodes.most_common())}


def main_loop(function):
    """(header, [Instruction]) of the loop with the most matrix-core instructions (ties: the smaller,
    i.e. the innermost that holds them all), or None."""
    best = None
    for header, _, ins in function.loops():
        groups, _ = mix(ins)
        if not groups['tensor']:
            continue
        key = (groups['tensor'], -len(ins))
        if best is None or key > best[0]:
            best = (key, header, ins)
    return None if best is None else best[1:]


def loop_union(function):
    """Every instruction inside at least one loop, once."""
    seen = {}
    for _, _, ins in function.loops():
        for i in ins:
            seen[i.line] = i
    return [seen[k] for k in sorted(seen)]


# ---- command line (sass_loops.cli) ---------------------------------------------------------------------
AMD_KEYS = ('lds', 'lds_narrow', 'lds_32', 'lds_64', 'lds_128', 'sts', 'sts_narrow', 'sts_32', 'sts_64', 'sts_128',
            'async_copy', 'global', 'acc_moves', 'barrier', 'waitcnt', 'mufu', 'integer', 'scalar', 'branch', 'local',
            'shuffle', 'permute', 'padding')


def main(argv=None):
    def functions_of(text):
        for name, function in functions(text):
            figures = ', '.join(f'{k} {v}' for k, v in sorted(function.figures.items()))
            yield name, f'{name[:160]}  ({figures})', [(h, summary(name, h, ins)) for h, _, ins in function.loops()]
    return sass_loops.cli(argv, __doc__.split('\n\n')[0], 'GCN assembly (hipcc --cuda-device-only -S); - for stdin',
                          'matrix-core', AMD_KEYS, functions_of, show_empty=True)


if __name__ == '__main__':
    sys.exit(main())
