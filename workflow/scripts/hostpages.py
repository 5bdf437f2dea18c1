#!/usr/bin/env python3
"""Host writes of `joj compare --json` documents, counted two ways.

- bytes, as 8 KiB pages (the `device.host_write_bytes` of each row);
- as the X-FTL paper's Table 1 counts them: SQLite's writes in SQLite pages (database, journal,
  WAL) plus the filesystem's in filesystem blocks (ext4 metadata and journal, 4 KiB: joj makes
  every filesystem with 4 KiB blocks). For `xftl` rows the file layer's own metadata pages are
  its filesystem blocks.

Usage: workflow/scripts/hostpages.py COMPARE.json [...]
"""
import json
import sys

FS_BLOCK = 4096


def counts(row):
    """(sqlite pages, filesystem blocks, bytes) of one compare row."""
    page = row["config"]["page_size"]
    if row["mode"] == "xftl":
        fs = row["xftl"]["fs"]
        return fs["db_page_writes"] + fs["journal_page_writes"], fs["inode_page_writes"], \
            row["device"]["host_write_bytes"]
    block = row["block"]
    if block is None:
        raise SystemExit(f"{row['mode']}: no block section; run the compare with tracing on")
    sqlite = sum(block["data_by_role"].values()) / page
    fs = (block["fs_journal_bytes"] + block["metadata_bytes"]) / FS_BLOCK
    return sqlite, fs, row["device"]["host_write_bytes"]


def main(paths):
    if not paths:
        raise SystemExit(__doc__)
    for path in paths:
        rows = {r["mode"]: r for r in json.load(open(path))["rows"]}
        print(path)
        print(f"  {'mode':8} {'sqlite pages':>12} {'fs blocks':>10} {'paper count':>12} {'8 KiB pages':>12}")
        total = {}
        for mode, row in rows.items():
            sqlite, fs, nbytes = counts(row)
            total[mode] = (sqlite + fs, nbytes)
            print(f"  {mode:8} {sqlite:12.0f} {fs:10.0f} {sqlite + fs:12.0f} {nbytes / 8192:12.0f}")
        if "xftl" in total:
            x_count, x_bytes = total["xftl"]
            for mode in ("delete", "truncate", "wal"):
                if mode in total:
                    count, nbytes = total[mode]
                    print(f"  xftl / {mode}: {x_count / count:.3f} as the paper counts, "
                          f"{x_bytes / nbytes:.3f} in bytes")


if __name__ == "__main__":
    main(sys.argv[1:])
