#!/usr/bin/env python3
"""Compares collectives_bench busbw with torch.distributed's at the sizes both measured.

  python3 kernels/tools/busbw_compare.py collectives4.json torch_collectives4.json

Prints one row per (op, size): our busbw, torch's, ours / torch; the issue's check is >= 0.95.
"""
import json
import sys


def main():
    ours_doc = json.load(open(sys.argv[1]))
    torch_doc = json.load(open(sys.argv[2]))
    ours = {(r["op"], r["size_bytes"]): r for r in ours_doc["results"]}
    print(f"# collectives_bench ({ours_doc.get('libraries', {}).get('NCCL', '?')}) vs torch.distributed "
          f"({torch_doc.get('torch')}, NCCL {torch_doc.get('nccl')}), {torch_doc.get('ranks')} GPUs, p50, slowest rank")
    print(f"# {'op':>10} {'size':>12} {'ours':>8} {'torch':>8} {'ours/torch':>10} {'ours_t':>9} {'torch_t':>9}")
    print(f"# {'':>10} {'(B)':>12} {'(GB/s)':>8} {'(GB/s)':>8} {'':>10} {'(us)':>9} {'(us)':>9}")
    worst = None
    for t in torch_doc["results"]:
        o = ours.get((t["op"], t["size_bytes"]))
        if o is None:
            continue
        ratio = o["busbw_GBps"] / t["busbw_GBps"]
        worst = ratio if worst is None else min(worst, ratio)
        print(f"  {t['op']:>10} {t['size_bytes']:>12} {o['busbw_GBps']:>8.1f} {t['busbw_GBps']:>8.1f} {ratio:>10.3f} "
              f"{o['time_us']['p50']:>9.1f} {t['time_us']['p50']:>9.1f}")
    if worst is not None:
        print(f"# worst ours/torch {worst:.3f}: {'PASS' if worst >= 0.95 else 'FAIL'} (threshold 0.95)")


if __name__ == "__main__":
    main()
