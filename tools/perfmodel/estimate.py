#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Which resource bounds a kernel: a throughput model from counts read without a GPU.

    tools/perfmodel/estimate.py [CASES.toml] [--markdown] [--case SUBSTRING]

For each case of CASES (default: tools/perfmodel/cases.toml) it combines the kernel's counts per warp
per tile -- issued instructions and tensor-core instructions (from its SASS: tools/sass/sass_loops.py),
shared-memory wavefronts (from the emulator's counter, emulator/statistics.hpp, or the bank model by
hand where the code is gone) -- with the problem's tile count and DRAM bytes, and the target's
published rates, and prints the time each resource alone would take:

  issue    warp instructions / (SMs x schedulers x 1 per clock)
  tensor   tensor-core FLOP / (SMs x FLOP per clock x the instruction's efficiency); mma.sync reaches
           about 64 % of Hopper's dense peak (arXiv:2501.12084), wgmma about 96 %
  shared   wavefronts / (SMs x 1 per clock): 128 bytes of shared memory per clock per SM
  dram     bytes / the device copy bandwidth measured in the same GPU runs (or the nominal one)

The largest is the prediction and names the bound. Per-SM work is rounded up to whole waves of the
resident blocks (`blocks` and `resident` of a case). Everything else -- latency chains, occupancy too
low to hide them, barriers, L2 -- is outside the model: where those bind, the model under-predicts,
and its bound is not the measured one. A case's `measured_bound` says what the GPU runs established, so
the table shows where the model can be trusted. A case with `measured_ms` prints the model's error.
"""
from __future__ import annotations

import argparse
import math
import pathlib
import sys

try:
    import tomllib  # Python 3.11
except ImportError:
    print('SKIP: tools/perfmodel/estimate.py needs Python 3.11 or newer (tomllib)')
    sys.exit(77)

HERE = pathlib.Path(__file__).resolve().parent


def resources(case, target):
    """Seconds per resource for one case on one target (dict), and the waves factor applied."""
    sms = target['sms']
    clock = target['clock_ghz'] * 1e9
    out = {}
    if 'dram_bytes' in case:
        out['dram'] = case['dram_bytes'] / (target['dram_gbps'] * 1e9)
    if 'blocks' not in case:  # a memory-bound case given by its bytes alone
        return out, 1.0
    per_sm = case['blocks'] / sms
    waves = case['blocks'] / (sms * case['resident'])
    # Whole waves: the busiest SM runs ceil(waves) x resident blocks.
    busiest = math.ceil(waves) * case['resident'] if waves > 1 else math.ceil(per_sm)
    factor = busiest / per_sm
    warp_tiles = case['blocks'] * case['warps'] * case['tiles_per_block']
    if 'issue_per_warp_tile' in case:
        slots = warp_tiles * case['issue_per_warp_tile']
        out['issue'] = slots / (sms * target['schedulers'] * target['issue_per_scheduler'] * clock) * factor
    if 'tensor_per_warp_tile' in case:
        flop = warp_tiles * case['tensor_per_warp_tile'] * case['flop_per_tensor']
        eff = target['tensor_efficiency'][case['tensor_instruction']]
        out['tensor'] = flop / (sms * target['tensor_flop_per_sm_clock'][case['tensor_type']] * eff * clock) * factor
    if 'wavefronts_per_warp_tile' in case:
        waves_total = warp_tiles * case['wavefronts_per_warp_tile']
        out['shared'] = waves_total / (sms * target['shared_wavefronts_per_sm_clock'] * clock) * factor
    return out, factor


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('cases', nargs='?', default=str(HERE / 'cases.toml'))
    ap.add_argument('--markdown', action='store_true', help='a table for docs/performance.md')
    ap.add_argument('--case', default='', help='only cases whose name contains this')
    ap.add_argument('--check', action='store_true',
                    help='fail unless the model names the measured bound of every case whose bound is one of its '
                         'resources (the test perfmodel.estimate)')
    a = ap.parse_args(argv)
    data = tomllib.loads(pathlib.Path(a.cases).read_text())
    targets = data['target']
    rows = []
    for name, case in data['case'].items():
        if a.case not in name:
            continue
        target = targets[case['target']]
        t, factor = resources(case, target)
        bound = max(t, key=t.get)
        predicted = t[bound]
        measured = case.get('measured_ms')
        error = None if measured is None else (predicted * 1e3 - measured) / measured
        agrees = case.get('measured_bound')
        rows.append((name, case['target'], t, bound, predicted, measured, error, agrees, case.get('note', '')))

    cols = ('issue', 'tensor', 'shared', 'dram')
    if a.markdown:
        print('| case | target | ' + ' | '.join(f'{c} ms' for c in cols) +
              ' | model: bound, ms | measured ms | error | bound established by the GPU runs |')
        print('|---|---|' + '---:|' * len(cols) + '---|---:|---:|---|')
    else:
        print(f"{'case':34s} {'target':7s} " + ' '.join(f'{c:>8s}' for c in cols) +
              f" {'bound':>7s} {'model':>8s} {'measured':>9s} {'error':>7s}  measured bound")
    for name, tgt, t, bound, predicted, measured, error, agrees, note in rows:
        cells = [('-' if c not in t else f'{t[c] * 1e3:.3g}') for c in cols]
        m = 'not measured' if measured is None else f'{measured:.3g}'
        e = '' if error is None else f'{error:+.0%}'
        same = '' if not agrees else (f'{agrees} (same)' if agrees == bound else f'{agrees} (model: {bound})')
        if a.markdown:
            print(f'| {name} | {tgt} | ' + ' | '.join(cells) + f' | {bound}, {predicted * 1e3:.3g} | {m} | {e} | {same} |')
        else:
            print(f'{name:34s} {tgt:7s} ' + ' '.join(f'{c:>8s}' for c in cells) +
                  f' {bound:>7s} {predicted * 1e3:8.3g} {m:>9s} {e:>7s}  {same}')
    if a.check:
        wrong = [(r[0], r[7], r[3]) for r in rows if r[7] in cols and r[7] != r[3]]
        for name, measured_bound, bound in wrong:
            print(f'WRONG BOUND: {name}: the GPU runs established {measured_bound}, the model names {bound}')
        inside = sum(1 for r in rows if r[7] in cols)
        if wrong or not inside:
            return 1
        print(f'the model names the measured bound of all {inside} cases bound by a resource it models')
    return 0


if __name__ == '__main__':
    sys.exit(main())
