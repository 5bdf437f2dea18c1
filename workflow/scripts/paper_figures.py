#!/usr/bin/env python3
"""Every paper figure next to joj's figure computed from this run (issue 36, point 4).

Reads the summary table of docs/results/README.md (each paper figure, the paper's number,
joj's published figures and verdict) and, for every row this workflow rebuilds, computes joj's
figure again from the run's own documents under OUT. Writes a `paper_figures` document that
`joj report` shows first on its page (docs/formats/paper-figures.md), and the same as Markdown.

A row the workflow does not rebuild keeps its published figure and says so; a row whose
documents are missing or do not parse says why. Nothing is carried over from the published
table into "this run". Every rule below names the README row it computes: a rule whose row is
gone (the README was reworded) stops the script, so the two cannot drift apart silently.

Usage: paper_figures.py README.md OUT PROFILE JSON_OUT MD_OUT
"""
import importlib.util
import json
import os
import re
import stat
import sys
from pathlib import Path

_spec = importlib.util.spec_from_file_location(
    "hostpages", os.path.join(os.path.dirname(os.path.abspath(__file__)), "hostpages.py"))
HOSTPAGES = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(HOSTPAGES)

README, OUT, PROFILE, JSON_OUT, MD_OUT = sys.argv[1:6]
OUT = Path(OUT)
# A result document is read at most this large (joj's own are a few MiB).
MAX_BYTES = 64 << 20


# The start of a figure this run does not meet (its `this_run_verdict` is "not met").
NOT_MET = "NOT MET"


class Missing(Exception):
    """This run has no figure for the row: the reason."""


def read_text(rel):
    """A file of this run as text: a regular file (not a link) of at most MAX_BYTES, or
    Missing."""
    p = OUT / rel
    try:
        st = os.lstat(p)
    except OSError:
        raise Missing(f"{rel} is not in this run") from None
    if not stat.S_ISREG(st.st_mode):
        raise Missing(f"{rel} is not a regular file (a link, FIFO or device is not read)")
    if st.st_size > MAX_BYTES:
        raise Missing(f"{rel} is larger than {MAX_BYTES} bytes")
    with open(p, "rb") as f:
        data = f.read(MAX_BYTES + 1)
    if len(data) > MAX_BYTES:
        raise Missing(f"{rel} is larger than {MAX_BYTES} bytes")
    return data.decode("utf-8", errors="replace")


def load(rel):
    try:
        return json.loads(read_text(rel))
    except ValueError as e:
        raise Missing(f"{rel} does not parse: {e}") from e


def md_rows(rel):
    """The rows of every pipe table in a Markdown file of this run, as dicts by header."""
    rows, header = [], None
    for line in read_text(rel).splitlines():
        if not line.startswith("|"):
            header = None
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if header is None:
            header = cells
        elif not all(re.fullmatch(r":?-+:?", c) for c in cells):
            rows.append(dict(zip(header, cells)))
    return rows


def md_find(rel, **want):
    hits = [r for r in md_rows(rel) if all(r.get(k) == v for k, v in want.items())]
    if not hits:
        raise Missing(f"{rel} has no row {want}")
    return hits[0]


def num(text):
    m = re.match(r"[-+]?\d[\d,]*(\.\d+)?", text.strip())
    if not m:
        raise Missing(f"no number in {text!r}")
    return float(m.group(0).replace(",", ""))


def compare_row(rel, mode):
    for r in load(rel)["rows"]:
        if r["mode"] == mode:
            return r
    raise Missing(f"{rel} has no mode {mode}")


def kib(row, *fields):
    b = row["block_per_txn"]
    return sum(b[f] for f in fields) / 1024


def data_fsj_total(row):
    return (kib(row, "data_bytes"), kib(row, "fs_journal_bytes"),
            kib(row, "data_bytes", "metadata_bytes", "fs_journal_bytes"))


def fmt3(t):
    return " / ".join(f"{x:.1f}" for x in t)


# ----------------------------------------------------------------- the rules, by README row
RULES = []


def rule(paper, figure, basis):
    """Computes the README row (paper, figure); returns (joj's figure, [documents]), or with
    a third item, this run's verdict ("met" or "not met") where the row is a check."""
    def add(f):
        RULES.append(((paper, figure), basis, f))
        return f
    return add


WALDIO = "WALDIO (ATC'15)"
XFTL = "X-FTL (SIGMOD'13)"
IFTL = "i-FTL (NVM logging)"
EMMC = "eMMC features"
ATC = "ATC'13"


@rule(WALDIO, "Table 1: KiB per insert on ext4, WAL (data / FS journal / total)", "measured")
def _():
    src = "joj/ext4-1000.json"
    r = compare_row(src, "wal")
    return f"{fmt3(data_fsj_total(r))} ({r['transactions']} inserts)", [src]


@rule(WALDIO, "Table 1: OFF", "measured")
def _():
    a, b = "joj/ext4-fsync-1000.json", "joj/ext4-1000.json"
    f, d = compare_row(a, "off"), compare_row(b, "off")
    return f"`fsync`: {fmt3(data_fsj_total(f))}; `fdatasync`: {fmt3(data_fsj_total(d))}", [a, b]


@rule(WALDIO, "Table 1: DELETE / TRUNCATE / PERSIST (total)", "measured")
def _():
    src = "joj/ext4-1000.json"
    t = [data_fsj_total(compare_row(src, m))[2] for m in ("delete", "truncate", "persist")]
    return f"{fmt3(t)} (`fdatasync`)", [src]


@rule(WALDIO, "write volume, 1000 inserts: waldio / WAL", "measured")
def _():
    src = "waldio/ext4-insert-fresh.json"
    w, d = (data_fsj_total(compare_row(src, m))[2] for m in ("wal", "waldio"))
    return f"{d:.1f} vs {w:.1f} KiB per insert = 1/{w / d:.1f}", [src]


def speed_ratio(mode):
    src = "waldio-speed/ext4-fresh.json"
    by = {(s["op"], s["mode"]): s["median_ratio"] for s in load(src)["summaries"]}
    parts = [f"{op} {by[(op, mode)]:.2f}×" for op in ("insert", "update", "delete")
             if (op, mode) in by]
    if not parts:
        raise Missing(f"{src} has no {mode}")
    return ", ".join(parts) + " (`joj speed`, fresh)", [src]


@rule(WALDIO, "throughput, waldio / WAL (Galaxy S5)", "measured")
def _():
    return speed_ratio("waldio")


@rule(WALDIO, "throughput, waldio with group sync / WAL", "measured")
def _():
    # `joj speed` runs waldio alone; the WALDIO compare of each operation has group sync.
    parts, srcs = [], []
    for op in OPS:
        src = f"waldio/ext4-{op}-fresh.json"
        w, g = (compare_row(src, m)["ops_per_sec"] for m in ("wal", "waldio-gs"))
        parts.append(f"{op} {g / w:.2f}×")
        srcs.append(src)
    return ", ".join(parts) + " (`joj compare`, fresh, one run)", srcs


@rule(WALDIO, "durability of a committed transaction", "measured")
def _():
    srcs = ["crash-states/ext4-wal.json", "crash-states/ext4-waldio.json"]
    parts = []
    for s in srcs:
        d = load(s)
        parts.append(f"{d['mode']}: {d['states_explored']} kernel crash states, "
                     f"{d['lost_acknowledged']} lost")
    return "; ".join(parts), srcs


def xftl_cell(v, k):
    src = f"xftl/galaxy-s5/v{v}-k{k}.json"
    rows = {r["mode"]: r["device"] for r in load(src)["rows"]}
    return rows, src


@rule(XFTL, "Table 1: host writes X-FTL / WAL (SQLite pages + ext4 blocks)", "measured")
def _():
    src = "xftl/galaxy-s5/vfresh-k5.json"
    rows = {r["mode"]: r for r in load(src)["rows"]}
    if "xftl" not in rows or "wal" not in rows:
        raise Missing(f"{src} lacks the xftl or wal row")
    # SQLite pages + filesystem blocks, as the paper counts (hostpages.py), and bytes.
    pages = {m: sum(HOSTPAGES.counts(rows[m])[:2]) for m in ("xftl", "wal")}
    b = {m: rows[m]["device"]["host_write_bytes"] for m in ("xftl", "wal")}
    return f"{pages['xftl'] / pages['wal']:.2f} as the paper counts ({b['xftl'] / b['wal']:.2f} " \
           "in bytes; `galaxy-s5`, k = 5)", [src]


def time_ratio(base):
    out, srcs = [], []
    for v, name in (("fresh", "fresh"), ("50", "at 50 %")):
        rows, src = xftl_cell(v, 5)
        out.append(f"{rows[base]['modeled_s'] / rows['xftl']['modeled_s']:.2f}× {name}")
        srcs.append(src)
    return "`galaxy-s5` " + ", ".join(out), srcs


@rule(XFTL, "Table 1: time WAL / X-FTL (k = 5)", "modeled")
def _():
    return time_ratio("wal")


@rule(XFTL, "Table 1: time rollback / X-FTL (k = 5)", "modeled")
def _():
    return time_ratio("delete")


@rule(XFTL, "Table 1: NAND programs at 50 % (X-FTL / WAL / rollback)", "modeled")
def _():
    rows, src = xftl_cell("50", 5)
    p = [rows[m]["nand_programs"] for m in ("xftl", "wal", "delete")]
    return " / ".join(f"{x:,}" for x in p) + " (`galaxy-s5`, k = 5)", [src]


@rule(XFTL, "Figure 5: k = 1..20, GC validity fresh / 30 / 50 / 70 %", "modeled")
def _():
    ratios, srcs = [], []
    for p in sorted((OUT / "xftl" / "galaxy-s5").glob("v*-k*.json")):
        src = str(p.relative_to(OUT))
        rows = {r["mode"]: r["device"] for r in load(src)["rows"]}
        ratios.append(rows["wal"]["modeled_s"] / rows["xftl"]["modeled_s"])
        srcs.append(src)
    if not ratios:
        raise Missing("no X-FTL grid cell in this run")
    return f"WAL / X-FTL {min(ratios):.2f}–{max(ratios):.2f}× over {len(ratios)} cells " \
           "(`galaxy-s5`)", srcs


@rule(XFTL, "Table 4: TPC-C write / read-intensive, X-FTL / WAL", "modeled")
def _():
    src = "xftl/mix-tpcc-write.json"
    rows = {r["mode"]: r["device"] for r in load(src)["rows"]}
    return f"{rows['wal']['modeled_s'] / rows['xftl']['modeled_s']:.2f}× write-intensive " \
           "(device only)", [src]


@rule(XFTL, "Table 5: restart after a power cut, ms (rollback / WAL / X-FTL)", "modeled")
def _():
    src = "xftl/restart-galaxy-s5.json"
    ms = {r["mode"]: r["mean_restart_ms"] for r in load(src)["rows"]}
    return f"`galaxy-s5`: {ms['delete']:.2f} / {ms['wal']:.2f} / {ms['xftl']:.2f}", [src]


@rule(XFTL, "crash safety", "measured")
def _():
    srcs = sorted(str(p.relative_to(OUT)) for p in (OUT / "xftl").glob("crash-*.json"))
    if not srcs:
        raise Missing("no X-FTL crash run in this run")
    docs = [load(s) for s in srcs]
    sound = [d for d in docs if not d.get("canary")]
    canary = [d for d in docs if d.get("canary")]
    cuts = sum(d["cuts"] for d in sound)
    passed = sum(d["passed"] for d in sound)
    caught = sum(1 for d in canary if d["failed"] > 0)
    text = f"{passed} of {cuts} cuts on sound devices pass; canary caught in {caught} of " \
           f"{len(canary)} runs ({sum(d['cuts'] for d in canary)} cuts)"
    # Met only when every sound cut passes and every canary run is caught: a canary that got
    # through shows the check too weak for this run, never a pass beside the published "met".
    why = [w for w, bad in ((f"{cuts - passed} cuts on sound devices fail", passed < cuts),
                            ("no canary run", not canary),
                            (f"a canary not caught in {len(canary) - caught} of {len(canary)} "
                             "runs: the check is too weak at these sizes (more cuts)",
                             caught < len(canary))) if bad]
    if why:
        return f"{NOT_MET} ({'; '.join(why)}): {text}", srcs, "not met"
    return text, srcs, "met"


def iftl_tps(name):
    d = load(f"iftl/{name}.json")
    dev = d["device"]
    if dev["ops_basis"] == "transactions":
        return dev["modeled_ops_per_sec"]
    return d["transactions"] / dev["modeled_s"]


OPS = ("insert", "update", "delete")


@rule(IFTL, "Figure 7: i-FTL / ext4 journal-off baseline (insert / update / delete)", "modeled")
def _():
    r = [iftl_tps(f"fig7-iftl-{op}") / iftl_tps(f"fig7-baseline-{op}") for op in OPS]
    return " / ".join(f"{x:.2f}×" for x in r), \
        [f"iftl/fig7-{m}-{op}.json" for m in ("iftl", "baseline") for op in OPS]


@rule(IFTL, "Figure 7: i-FTL over X-FTL", "modeled")
def _():
    g = [iftl_tps(f"fig7-iftl-{op}") / iftl_tps(f"fig7-xftl-{op}") - 1 for op in OPS]
    return f"{100 * sum(g) / len(g):+.1f} % (mean)", \
        [f"iftl/fig7-{m}-{op}.json" for m in ("iftl", "xftl") for op in OPS]


@rule(IFTL, "mapping writes, X-FTL vs i-FTL", "modeled")
def _():
    m = {j: [load(f"iftl/fig7-{j}-{op}.json")["xftl"]["mapping_programs_per_host_page"]
             for op in OPS] for j in ("xftl", "iftl")}
    return f"X-FTL {min(m['xftl']):.1f}–{max(m['xftl']):.1f} flash pages per host page, " \
           f"i-FTL {max(m['iftl']):.1f}", \
        [f"iftl/fig7-{j}-{op}.json" for j in ("xftl", "iftl") for op in OPS]


@rule(IFTL, "Figure 8: i-FTL over X-FTL, threads 1–8", "modeled")
def _():
    g = [iftl_tps(f"fig8-iftl-{t}") / iftl_tps(f"fig8-xftl-{t}") - 1 for t in range(1, 9)]
    return f"{100 * g[0]:+.1f} % → {100 * g[-1]:+.1f} % (1 → 8 threads)", \
        [f"iftl/fig8-{j}-{t}.json" for j in ("iftl", "xftl") for t in (1, 8)]


@rule(EMMC, "optimized journal over baseline (insert / update / delete)", "modeled")
def _():
    src = "tables/emmc-journal.md"
    parts = []
    for mode in ("WAL", "TRUNCATE"):
        g = [md_find(src, mode=mode, op=op)["gain (paper)"].split()[0] for op in OPS]
        parts.append(f"{mode} {' / '.join(g)} %")
    return "; ".join(parts), [src]


@rule(EMMC, "no-journal ahead of the optimized journal", "modeled")
def _():
    src = "tables/emmc-journal.md"
    key = "no-journal ahead of optimized (paper: 9.3 % on average)"
    parts = []
    for mode in ("WAL", "TRUNCATE"):
        g = [num(md_find(src, mode=mode, op=op)[key]) for op in OPS]
        parts.append(f"{mode} {min(g):+.1f} to {max(g):+.1f} %")
    return "; ".join(parts), [src]


@rule(EMMC, "file-system integrity under power cuts", "measured")
def _():
    src = "crash-states/ext4-postmark-emmc.json"
    d = load(src)
    return f"optimized journal: {d['states_explored']} kernel crash states, " \
           f"{d['violations']} violations, {d['fsck_failures']} fsck failures", [src]


MATRIX = "tables/atc13matrix.md"


def matrix(fs, op, row):
    r = md_find(MATRIX, fs=fs, op=op, row=row)
    return r["measured TPS (×B)"], r["modeled TPS (×B)"]


def ratio(cell):
    m = re.match(r"\s*[\d.]+ \(([\d.]+)\)", cell)
    return f"{m.group(1)}×" if m else "–"


def matrix_ratios(row):
    ins, upd = matrix("ext4", "insert", row), matrix("ext4", "update", row)
    return f"measured {ratio(ins[0])} / {ratio(upd[0])}; modeled {ratio(ins[1])} / " \
           f"{ratio(upd[1])}", [MATRIX]


@rule(ATC, "Table 2: ext4 insert baseline (TRUNCATE, `fsync`), inserts/s", "both")
def _():
    m, d = matrix("ext4", "insert", "Baseline")
    return f"measured {num(m):.1f} (loop device); modeled {num(d):.1f} (host + device)", [MATRIX]


@rule(ATC, "Table 2: F (`fdatasync`), ext4 insert", "both")
def _():
    m, d = matrix("ext4", "insert", "F")
    return f"measured {ratio(m)}; modeled {ratio(d)}", [MATRIX]


@rule(ATC, "Table 2: E (external journal), ext4 insert / update", "both")
def _():
    return matrix_ratios("E")


@rule(ATC, "Table 2: P (polling), ext4 insert / update", "modeled")
def _():
    ins, upd = matrix("ext4", "insert", "P"), matrix("ext4", "update", "P")
    return f"modeled {ratio(ins[1])} / {ratio(upd[1])} (not measurable here)", [MATRIX]


@rule(ATC, "Table 2: W (WAL), ext4 insert / update", "both")
def _():
    return matrix_ratios("W")


@rule(ATC, "Table 2: F+E+P+W, ext4 insert / update", "both")
def _():
    return matrix_ratios("F+E+P+W")


@rule(ATC, "Table 2: xfs insert baseline, against ext4's", "both")
def _():
    x, e = matrix("xfs", "insert", "Baseline"), matrix("ext4", "insert", "Baseline")
    return f"measured {num(x[0]):.1f} vs {num(e[0]):.1f}; modeled {num(x[1]):.1f} vs " \
           f"{num(e[1]):.1f}", [MATRIX]


# ----------------------------------------------------------------- the published table
def published(readme):
    """The rows of the README's first table: paper, figure, paper's number, joj measured,
    joj modeled, verdict, details (Markdown links)."""
    text = Path(readme).read_text()
    start = text.index("## Every paper figure next to joj's")
    end = text.index("\n## ", start + 1)
    rows = []
    for line in text[start:end].splitlines():
        if not line.startswith("| ") or line.startswith("| paper |"):
            continue
        c = [x.strip() for x in line.strip().strip("|").split("|")]
        if len(c) != 7:
            raise SystemExit(f"{readme}: a summary row without 7 columns: {line}")
        links = re.findall(r"\[([^\]]+)\]\(([^)\s]+)\)", c[6])
        rows.append({"paper": c[0], "figure": c[1], "paper_value": c[2],
                     "published_measured": c[3], "published_modeled": c[4],
                     "published_verdict": c[5], "links": links})
    if not rows:
        raise SystemExit(f"{readme}: no summary table under \"Every paper figure next to joj's\"")
    return rows


def plain(text):
    """Markdown's code quotes dropped: the page shows text."""
    return text.replace("`", "")


def main():
    rows = published(README)
    keys = {(r["paper"], r["figure"]) for r in rows}
    for key, _, _ in RULES:
        if key not in keys:
            raise SystemExit(f"paper_figures.py: a rule for {key}, which is no row of {README}")
    rules = {key: (basis, f) for key, basis, f in RULES}
    docs_dir = os.path.dirname(os.path.abspath(README))
    page_dir = os.path.dirname(os.path.abspath(JSON_OUT))
    out = []
    for r in rows:
        basis, f = rules.get((r["paper"], r["figure"]), (None, None))
        r = {k: plain(v) if isinstance(v, str) else v for k, v in r.items()}
        row = {"paper": r["paper"], "figure": r["figure"], "paper_value": r["paper_value"],
               "this_run": None, "this_run_basis": basis, "this_run_sources": [],
               "not_in_this_run": None, "this_run_verdict": None,
               "published_measured": r["published_measured"],
               "published_modeled": r["published_modeled"],
               "published_verdict": r["published_verdict"],
               # Links to the published detail, relative to the folder of this document.
               "details": [{"text": t, "href": os.path.relpath(
                   os.path.join(docs_dir, h.split("#")[0]), page_dir)
                   + ("#" + h.split("#", 1)[1] if "#" in h else "")} for t, h in r["links"]]}
        if f is None:
            row["not_in_this_run"] = "not rebuilt by the workflow: see the published figure"
        else:
            try:
                text, srcs, *verdict = f()
                row["this_run"] = plain(text)
                row["this_run_verdict"] = verdict[0] if verdict else None
                row["this_run_sources"] = [os.path.relpath(OUT / s, page_dir) for s in srcs]
            except (Missing, KeyError, IndexError, ZeroDivisionError, TypeError, AttributeError,
                    ValueError, SystemExit) as e:
                row["not_in_this_run"] = f"not computed: {e if isinstance(e, Missing) else repr(e)}"
        out.append(row)
    doc = {"paper_figures": out, "profile": PROFILE, "results": str(OUT),
           "published": os.path.relpath(os.path.abspath(README), page_dir),
           "computed": sum(1 for r in out if r["this_run"] is not None)}
    Path(JSON_OUT).write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
    with open(MD_OUT, "w") as md:
        md.write(f"Every paper figure next to joj's from this run (profile `{PROFILE}`; "
                 f"{doc['computed']} of {len(out)} rows rebuilt)\n\n")
        md.write("| paper | figure | paper | joj, this run | joj, published (measured / "
                 "modeled) |\n|---|---|---|---|---|\n")
        for r in out:
            this = r["this_run"] if r["this_run"] is not None else f"– ({r['not_in_this_run']})"
            md.write(f"| {r['paper']} | {r['figure']} | {r['paper_value']} | {this} | "
                     f"{r['published_measured']} / {r['published_modeled']} |\n")


main()
