#!/usr/bin/env python3
"""The FTL side of X-FTL Table 1 from `joj compare --json` documents, next to the paper's.

The paper's columns (Table 1, 5 pages per transaction, GC validity 50 %, on OpenSSD):
Write = NAND page programs (host pages, GC copies and the FTL's metadata), Read = NAND page
reads, GC = garbage-collection runs, Erase = blocks erased, "the data blocks garbage collected
and the metadata blocks erased by FTL". joj reports the data blocks as `erases` and the map
area's blocks as `map_erases` (only profiles with `ftl.erase_map_blocks`, i.e. `openssd`).

Usage: workflow/scripts/table1.py COMPARE.json [...]
"""
import json
import sys

# mode: (write, read, gc, erase, fsync calls), X-FTL Table 1.
PAPER = {
    "delete": (243_639, 9_792, 756, 2_044, 2_999),
    "wal": (92_979, 3_472, 409, 897, 1_013),
    "xftl": (33_239, 2_011, 115, 243, 994),
}


def main(paths):
    if not paths:
        raise SystemExit(__doc__)
    for path in paths:
        rows = json.load(open(path))["rows"]
        print(path)
        print(f"  {'mode':8} {'programs':>9} {'reads':>7} {'GC runs':>7} {'erases':>15} "
              f"{'flushes':>7} {'modeled s':>9}   paper: write / read / GC / erase")
        for row in rows:
            d = row["device"]
            data, meta = d["erases"], d.get("map_erases", 0)
            erases = f"{data + meta} ({data}+{meta})"
            paper = PAPER.get(row["mode"])
            paper = " / ".join(f"{x:,}" for x in paper[:4]) if paper else "-"
            print(f"  {row['mode']:8} {d['nand_programs']:9} {d['nand_reads']:7} {d['gc_runs']:7} "
                  f"{erases:>15} {d['flushes']:7} {d['modeled_s']:9.3f}   {paper}")


if __name__ == "__main__":
    main(sys.argv[1:])
