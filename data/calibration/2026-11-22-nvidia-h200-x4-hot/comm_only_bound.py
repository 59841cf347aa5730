#!/usr/bin/env python3
"""Bandwidth bound of the layer runner's copy-engine comm-only pass under two port models.

For every farskip-ce record given: the Dispatch bytes per (source, destination) pair from the record's
tokens_to_expert (experts split evenly over ranks, hidden x 2 bytes per row), the Combine as its
transpose; per all-to-all the busiest GPU's time under
  per-direction: max(bytes out, bytes in) / busbw
  shared:        (bytes out + bytes in) / (2 busbw)
with busbw the calibrated h200 profile's copy-engine table at 1 GiB. Prints both against comm_only_ms.
Usage: comm_only_bound.py PROFILE RECORD.json...
"""
import json
import sys

HIDDEN = {'qwen3-30b-a3b': 2048, 'mixtral-8x7b': 4096, 'llama4-scout': 5120}


def copy_engine_busbw(profile, gpus):
    for table in profile['collectives']:
        if table['kind'] == 'all_to_all' and table['algorithm'] == 'copy_engine' and table['gpus'] == gpus:
            return table['busbw'][-1]['GBps'] * 1e9
    raise SystemExit(f'no copy-engine all_to_all table for {gpus} GPUs')


def busiest(pairs, shared, busbw):
    n = len(pairs)
    out = [sum(pairs[s][d] for d in range(n) if d != s) for s in range(n)]
    into = [sum(pairs[s][d] for s in range(n) if s != d) for d in range(n)]
    if shared:
        return max(o + i for o, i in zip(out, into)) / (2 * busbw)
    return max(max(o, i) for o, i in zip(out, into)) / busbw


profile = json.load(open(sys.argv[1]))
print('%-48s %9s %14s %9s' % ('record', 'measured', 'per-direction', 'shared'))
for path in sys.argv[2:]:
    for run in json.load(open(path))['results']:
        if run['schedule'] != 'farskip-ce':
            continue
        n, rows = run['gpus'], run['tokens_to_expert']
        per = len(rows[0]) // n
        width = HIDDEN[run['model']] * 2
        dispatch = [[sum(rows[s][d * per:(d + 1) * per]) * width for d in range(n)] for s in range(n)]
        combine = [list(col) for col in zip(*dispatch)]
        busbw = copy_engine_busbw(profile, n)
        bound = {shared: run['layers'] * 1e3 * (busiest(dispatch, shared, busbw) + busiest(combine, shared, busbw))
                 for shared in (False, True)}
        name = '%s EP%d T%d %s' % (run['model'], n, run['tokens_per_rank'], run['routing'])
        print('%-48s %9.2f %14.2f %9.2f' % (name, run['comm_only_ms']['p50'], bound[False], bound[True]))
