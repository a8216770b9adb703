#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
"""daxlease benchmark results: collect, validate, targets, table, plot.

  report.py collect RESULTS.jsonl --out BENCH.json [--quick] [--kernel K]
            [--release R] [--started T] [--wall S]
      the {"suite":"bench","bench":{...}} records of a test-VM run into one
      document, with the target ratios; validated against bench/schema.json
  report.py validate BENCH.json [--schema bench/schema.json]
  report.py table BENCH.json          markdown tables (README "Benchmarks")
  report.py plot BENCH.json --png OUT.png   (gnuplot, gnuplot-nox)

Python 3 standard library only.  The validator implements the JSON Schema
keywords bench/schema.json uses: type (also lists), required, properties,
additionalProperties false, items, enum, minimum, minItems, minLength.
"""
import argparse
import json
import math
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
MIB = 1 << 20


def type_ok(v, t):
    if isinstance(t, list):
        return any(type_ok(v, x) for x in t)
    return {
        "object": lambda: isinstance(v, dict),
        "array": lambda: isinstance(v, list),
        "string": lambda: isinstance(v, str),
        "boolean": lambda: isinstance(v, bool),
        "null": lambda: v is None,
        "integer": lambda: isinstance(v, int) and not isinstance(v, bool),
        "number": lambda: (isinstance(v, (int, float)) and
                           not isinstance(v, bool) and math.isfinite(v)),
    }[t]()


def check(v, s, where, errs):
    if "type" in s and not type_ok(v, s["type"]):
        errs.append(f"{where}: {v!r} is not of type {s['type']}")
        return
    if "enum" in s and v not in s["enum"]:
        errs.append(f"{where}: {v!r} not one of {s['enum']}")
    if ("minimum" in s and isinstance(v, (int, float)) and
            not isinstance(v, bool) and v < s["minimum"]):
        errs.append(f"{where}: {v} < minimum {s['minimum']}")
    if "minLength" in s and isinstance(v, str) and len(v) < s["minLength"]:
        errs.append(f"{where}: string shorter than {s['minLength']}")
    if isinstance(v, dict):
        props = s.get("properties", {})
        for k in s.get("required", []):
            if k not in v:
                errs.append(f"{where}: missing required {k!r}")
        for k, x in v.items():
            if k in props:
                check(x, props[k], f"{where}.{k}", errs)
            elif s.get("additionalProperties") is False:
                errs.append(f"{where}: unexpected property {k!r}")
    if isinstance(v, list):
        if "minItems" in s and len(v) < s["minItems"]:
            errs.append(f"{where}: fewer than {s['minItems']} items")
        if "items" in s:
            for i, x in enumerate(v):
                check(x, s["items"], f"{where}[{i}]", errs)


def validate(doc, schema_path):
    with open(schema_path) as f:
        schema = json.load(f)
    errs = []
    check(doc, schema, "$", errs)
    # beyond the schema: ordered statistics, errors only without samples
    for i, r in enumerate(doc.get("results", [])):
        if not isinstance(r, dict):
            continue
        m, lo, hi = r.get("median"), r.get("min"), r.get("max")
        if r.get("runs", 0) > 0:
            if None in (m, lo, hi) or not lo <= m <= hi:
                errs.append(f"$.results[{i}]: min/median/max not ordered")
        elif "error" not in r:
            errs.append(f"$.results[{i}]: no samples and no error")
    return errs


def find(doc, **kw):
    for r in doc["results"]:
        if all(r.get(k) == v for k, v in kw.items()):
            return r
    return None


def med(r):
    return r["median"] if r and r.get("runs") else None


def ratio(a, b):
    return a / b if a is not None and b else None


def targets(doc):
    out = []
    sizes = sorted({r["size"] for r in doc["results"] if r["group"] == "reg"})

    def add(name, rt, limit, sense, detail, by_hand=None):
        met = None if rt is None else (rt <= limit if sense == "<="
                                       else rt >= limit)
        t = {"name": name, "ratio": None if rt is None else round(rt, 3),
             "limit": limit, "sense": sense, "met": met, "detail": detail}
        if by_hand is not None:
            t["by_hand_vs_baseline_a"] = round(by_hand, 3)
        out.append(t)

    def pair_or_ratio(case, base, s):
        # the median of the runs' own ratios (group pair: both samples of
        # a run taken in one pass over the cases, so a slow spell of the
        # host cancels out); the ratio of the two medians without it
        pr = med(find(doc, group="pair", case=case, phase=f"vs_{base}",
                      size=s))
        if pr is not None:
            return pr
        return ratio(med(find(doc, group="reg", case=case, phase="total",
                              size=s)),
                     med(find(doc, group="reg", case=base, phase="total",
                              size=s)))

    def reg_target(name, s, limit):
        # the library over the same system calls made by hand (raw_fsdax);
        # beside it the hand-made path over baseline A, what any
        # implementation of the lease path pays on this file system
        d = med(find(doc, group="reg", case="daxlease_fsdax", phase="total",
                     size=s))
        raw = med(find(doc, group="reg", case="raw_fsdax", phase="total",
                       size=s))
        a = med(find(doc, group="reg", case="baseline_a_devdax",
                     phase="total", size=s))
        det = (f"median ibv_reg_dax_mr fsdax {d} us, by hand {raw} us, "
               f"baseline A {a} us; ratio of the medians "
               f"{ratio(d, raw) and round(ratio(d, raw), 3)}")
        add(name, pair_or_ratio("daxlease_fsdax", "raw_fsdax", s), limit,
            "<=", det, pair_or_ratio("raw_fsdax", "baseline_a_devdax", s))

    for s in sizes:
        if s >= 2 * MIB:
            reg_target(f"reg_library_vs_by_hand_{hsize(s).replace(' ', '')}",
                       s, 1.02)
        elif s == 4096:
            reg_target("reg_library_vs_by_hand_4KiB", s, 1.15)
    # pmem pinned as fast as DRAM: FS-DAX (the library) and device DAX
    # (upstream's ibv_reg_mr) over anonymous memory (THP: GUP-fast takes a
    # PMD at a time), and FS-DAX deregistration over device DAX's, both
    # through the library; 64 MiB and the largest size
    big = [s for s in sizes if s >= 64 * MIB]
    for s in big[:1] + big[-1:] if len(big) > 1 else big:
        h = hsize(s).replace(' ', '')
        for case, name in (("daxlease_fsdax", f"reg_fsdax_vs_anon_{h}"),
                           ("baseline_a_devdax", f"reg_devdax_vs_anon_{h}")):
            x = med(find(doc, group="reg", case=case, phase="total", size=s))
            b = med(find(doc, group="reg", case="baseline_b_anon",
                         phase="total", size=s))
            add(name, pair_or_ratio(case, "baseline_b_anon", s), 2.0, "<=",
                f"median registration {case} {x} us, anonymous {b} us")
        x = med(find(doc, group="dereg", case="daxlease_fsdax", size=s))
        b = med(find(doc, group="dereg", case="daxlease_devdax", size=s))
        pr = med(find(doc, group="pair", case="daxlease_fsdax",
                      phase="dereg_vs_daxlease_devdax",
                      size=s))
        add(f"dereg_fsdax_vs_devdax_{h}", pr if pr is not None else ratio(x, b),
            2.0, "<=",
            f"median deregistration daxlease_fsdax {x} us, daxlease_devdax {b} us")
    for op in ("write", "read"):
        dram = med(find(doc, group="data", case="dram", op=op, size=65536))
        for c in ("fsdax", "devdax"):
            x = med(find(doc, group="data", case=c, op=op, size=65536))
            # bandwidth ratio = inverse latency ratio at the same size:
            # the median of the runs' own ratios, else of the medians
            pr = med(find(doc, group="pair", case=c, phase="vs_dram", op=op,
                          size=65536))
            add(f"data_{op}_{c}_vs_dram_64KiB",
                pr if pr is not None else ratio(dram, x), 0.95, ">=",
                f"median {op} latency {c} {x} us, DRAM {dram} us; ratio "
                f"of the medians {ratio(dram, x) and round(ratio(dram, x), 3)}")
    # unmodified programs (tests/vm/suites/bench_apps.sh): a round's
    # figure over the same round's DRAM (or no-preload) one
    def app(case, phase, size, name, limit, sense, what):
        pr = med(find(doc, group="pair", case=case, phase=phase, size=size))
        a = med(find(doc, group="app", case=case, size=size))
        base = case.rsplit("_", 1)[0] + ("_dram" if phase == "vs_dram"
                                         else "_plain")
        b = med(find(doc, group="app", case=base, size=size))
        if a is None and pr is None:
            return
        add(name, pr, limit, sense,
            f"median {what} {a}, {base} {b}; median of the rounds' ratios")
    app("ib_write_bw_fsdax", "vs_dram", 65536,
        "app_ib_write_bw_fsdax_vs_dram_64KiB", 0.95, ">=",
        "ib_write_bw MB/s, server on FS-DAX through daxlease run")
    app("ib_write_lat_fsdax", "vs_dram", 64,
        "app_ib_write_lat_fsdax_vs_dram_64B", 1.05, "<=",
        "ib_write_lat typical us, server on FS-DAX through daxlease run")
    app("reg_4KiB_anon_preload", "vs_plain", 4096,
        "app_preload_passthrough_reg_4KiB", 1.05, "<=",
        "ibv_reg_mr 4 KiB anonymous us under the preload")
    for c in ("one_file", "many_files"):
        rs = [r for r in doc["results"] if r["group"] == "nmr" and
              r["case"] == c and r.get("phase") == "reg" and r["runs"]]
        vals = [r["median"] for r in rs]
        if len(vals) >= 2:
            rt = max(vals) / min(vals)
            det = ", ".join(f"{r['n_mrs']}: {r['median']} us" for r in rs)
        else:
            rt, det = None, "not measured"
        add(f"per_mr_flat_{c}", rt, 1.2, "<=",
            f"max/min per-MR registration with N live MRs ({det})")
    return out


def cmd_collect(a):
    results = []
    release = a.release
    with open(a.results, "rb") as f:
        for line in f.read().decode("utf-8", "replace").splitlines():
            line = line.strip().strip("\x00")
            try:
                rec = json.loads(line)
            except ValueError:
                continue
            if (isinstance(rec, dict) and rec.get("suite") == "bench" and
                    isinstance(rec.get("bench"), dict)):
                results.append(rec["bench"])
    doc = {
        "schema": "daxlease-bench/1",
        "quick": a.quick,
        "kernel": a.kernel,
        "kernel_release": release or "unknown",
        "started": a.started or "",
        "wall_seconds": a.wall,
        "runs": max([r.get("runs", 0) for r in results
                     if r.get("group") == "reg"] + [1]),
        "results": results,
    }
    regs = [r["size"] for r in results if r.get("group") == "reg"]
    if regs:
        doc["largest_size"] = max(regs)
    doc["targets"] = targets(doc) if results else []
    with open(a.out, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    errs = validate(doc, a.schema)
    for e in errs[:30]:
        print(f"report: schema: {e}", file=sys.stderr)
    print(f"report: {len(results)} measurements -> {a.out}; "
          f"schema {'FAILED' if errs else 'ok'}")
    return 1 if errs else 0


def cmd_validate(a):
    with open(a.bench) as f:
        doc = json.load(f)
    errs = validate(doc, a.schema)
    for e in errs:
        print(f"report: schema: {e}", file=sys.stderr)
    print(f"report: {a.bench}: schema {'FAILED' if errs else 'ok'}")
    return 1 if errs else 0


def hsize(s):
    if s >= MIB:
        return f"{s // MIB} MiB"
    if s >= 1024:
        return f"{s // 1024} KiB"
    return f"{s} B"


def fmt(r):
    if not r:
        return "-"
    if not r.get("runs"):
        return "error: " + r.get("error", "?")[:90].replace("|", "/")
    return f"{r['median']:.0f} ({r['min']:.0f}–{r['max']:.0f})"


def cmd_table(a):
    with open(a.bench) as f:
        doc = json.load(f)
    R = doc["results"]
    sizes = sorted({r["size"] for r in R if r["group"] == "reg"})
    p = print
    p(f"Kernel {doc['kernel']} ({doc['kernel_release']}), "
      f"{'quick' if doc['quick'] else 'full'} run of {doc['started']}, "
      f"{doc['wall_seconds']:.0f} s wall; median (min–max) µs of "
      f"{doc['runs']} runs.\n")
    p("| target | measured | by hand over baseline A | limit | met |")
    p("|---|---|---|---|---|")
    for t in doc["targets"]:
        rt = "-" if t["ratio"] is None else f"{t['ratio']:.3f}×"
        bh = t.get("by_hand_vs_baseline_a")
        fl = "-" if bh is None else f"{bh:.2f}×"
        met = {True: "yes", False: "**no**", None: "n/a"}[t["met"]]
        p(f"| {t['name']} | {rt} | {fl} | {t['sense']} {t['limit']} | "
          f"{met} |")
    p("\nRegistration (reg) and deregistration (dereg), µs:\n")
    p("| case | phase | " + " | ".join(hsize(s) for s in sizes) + " |")
    p("|---|---|" + "---|" * len(sizes))
    seen = []
    for r in R:
        if r["group"] in ("reg", "dereg"):
            k = (r["group"], r["case"], r.get("phase"))
            if k not in seen:
                seen.append(k)
    for g, c, ph in seen:
        cells = [fmt(find(doc, group=g, case=c, phase=ph, size=s))
                 for s in sizes]
        p(f"| {g} {c} | {ph} | " + " | ".join(cells) + " |")
    pr = [r for r in R if r["group"] == "pair" and "op" not in r and
          not r["case"].startswith(("ib_write_", "reg_4KiB_anon"))]
    if pr:
        p("\nEach run's registration time (dereg: deregistration time) "
          "over the same run's time of another case (median (min–max) of "
          "the runs' ratios):\n")
        p("| case | over | " + " | ".join(hsize(s) for s in sizes) + " |")
        p("|---|---|" + "---|" * len(sizes))
        for c, ph in dict.fromkeys((r["case"], r["phase"]) for r in pr):
            cells = []
            for s in sizes:
                r = find(doc, group="pair", case=c, phase=ph, size=s)
                cells.append("-" if not r else fmt(r) if not r.get("runs")
                             else f"{r['median']:.2f}× ({r['min']:.2f}–"
                                  f"{r['max']:.2f})")
            # vs_B: registration over B's; dereg_vs_B: deregistration
            over = (ph[3:] if ph.startswith("vs_") else
                    "dereg: " + ph[len("dereg_vs_"):]
                    if ph.startswith("dereg_vs_") else ph)
            p(f"| {c} | {over} | " + " | ".join(cells) + " |")
    al = [r for r in R if r["group"] == "align"]
    if al:
        p("\nAlignment of the fsdax range (ibv_reg_dax_mr), µs:\n")
        p("| case | size | median (min–max) |")
        p("|---|---|---|")
        for r in al:
            p(f"| {r['case']} | {hsize(r['size'])} | {fmt(r)} |")
    nm = [r for r in R if r["group"] == "nmr"]
    if nm:
        ns = sorted({r["n_mrs"] for r in nm})
        nr = max(r.get("runs", 0) for r in nm)
        p(f"\nOne 4 KiB registration with N−1 MRs live, µs ({nr} runs):\n")
        p("| case | op | " + " | ".join(f"N={n}" for n in ns) + " |")
        p("|---|---|" + "---|" * len(ns))
        for c in ("one_file", "many_files"):
            for ph in ("reg", "dereg"):
                cells = [fmt(find(doc, group="nmr", case=c, phase=ph,
                                  n_mrs=n)) for n in ns]
                p(f"| {c} | {ph} | " + " | ".join(cells) + " |")
    dt = [r for r in R if r["group"] == "data"]
    if dt:
        ds = sorted({r["size"] for r in dt})
        p("\nData path over rxe loopback RC, one operation in flight: "
          "median latency µs / MB/s:\n")
        p("| op | target | " + " | ".join(hsize(s) for s in ds) + " |")
        p("|---|---|" + "---|" * len(ds))
        for op in ("write", "read"):
            for c in ("fsdax", "devdax", "dram"):
                cells = []
                for s in ds:
                    r = find(doc, group="data", case=c, op=op, size=s)
                    cells.append("-" if not r or not r["runs"] else
                                 f"{r['median']:.0f} / {r['mbps']:.1f}")
                p(f"| {op} | {c} | " + " | ".join(cells) + " |")
    ap = [r for r in R if r["group"] == "app"]
    if ap:
        p("\nUnmodified programs, server buffer per case (median (min–max) "
          "of the rounds; MB/s or µs):\n")
        p("| case | size | median (min–max) | over DRAM / no preload |")
        p("|---|---|---|---|")
        for r in ap:
            c = r["case"]
            ph = "vs_plain" if c.endswith("_preload") else "vs_dram"
            q = find(doc, group="pair", case=c, phase=ph, size=r["size"])
            rt = ("-" if not q or not q.get("runs") else
                  f"{q['median']:.3f}× ({q['min']:.3f}–{q['max']:.3f})")
            v = ("error: " + r.get("error", "?") if not r.get("runs") else
                 f"{r['median']:.2f} ({r['min']:.2f}–{r['max']:.2f})")
            p(f"| {c} | {hsize(r['size'])} | {v} | {rt} |")
    return 0


def cmd_plot(a):
    with open(a.bench) as f:
        doc = json.load(f)
    R = doc["results"]
    tmp = tempfile.mkdtemp(prefix="dl-bench-plot.")
    cases = ["daxlease_fsdax", "raw_fsdax", "baseline_a_devdax",
             "baseline_b_anon", "rpma_devdax", "daxlease_devdax"]
    sizes = sorted({r["size"] for r in R if r["group"] == "reg"})
    with open(os.path.join(tmp, "reg.dat"), "w") as f:
        for s in sizes:
            row = [str(s)]
            for c in cases:
                r = find(doc, group="reg", case=c, phase="total", size=s)
                row.append(str(r["median"]) if r and r["runs"] else "NaN")
            f.write(" ".join(row) + "\n")
    ds = sorted({r["size"] for r in R if r["group"] == "data"})
    dcols = [(op, c) for op in ("write", "read")
             for c in ("fsdax", "devdax", "dram")]
    with open(os.path.join(tmp, "data.dat"), "w") as f:
        for s in ds:
            row = [str(s)]
            for op, c in dcols:
                r = find(doc, group="data", case=c, op=op, size=s)
                row.append(str(r["mbps"]) if r and r["runs"] and
                           r.get("mbps") is not None else "NaN")
            f.write(" ".join(row) + "\n")
    title = (f"daxlease bench, {doc['kernel_release']}"
             f"{' (quick)' if doc['quick'] else ''}")
    gp = [
        "set terminal pngcairo size 1400,560 noenhanced" if a.cairo else
        "set terminal png size 1400,560 noenhanced",
        f"set output '{a.png}'",
        "set multiplot layout 1,2 title '" + title + "'",
        "set logscale xy", "set grid", "set key top left",
        "set xlabel 'registered bytes'", "set ylabel 'median µs'",
        "set title 'registration (whole call)'",
        "plot " + ", ".join(
            f"'{tmp}/reg.dat' using 1:{i + 2} with linespoints "
            f"title '{c}'" for i, c in enumerate(cases)),
        "set xlabel 'transfer bytes'", "set ylabel 'MB/s (QD 1)'",
        "set title 'rxe loopback RC, RDMA WRITE / READ'",
        "plot " + ", ".join(
            f"'{tmp}/data.dat' using 1:{i + 2} with linespoints "
            f"title '{op} {c}'" for i, (op, c) in enumerate(dcols)),
        "unset multiplot",
    ]
    with open(os.path.join(tmp, "plot.gp"), "w") as f:
        f.write("\n".join(gp) + "\n")
    rc = subprocess.run(["gnuplot", os.path.join(tmp, "plot.gp")],
                        timeout=120).returncode
    if rc == 0:
        print(f"report: plot {a.png}")
    return rc


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawTextHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("collect")
    c.add_argument("results")
    c.add_argument("--out", required=True)
    c.add_argument("--quick", action="store_true")
    c.add_argument("--kernel", default="unknown")
    c.add_argument("--release", default="")
    c.add_argument("--started", default="")
    c.add_argument("--wall", type=float, default=0.0)
    c.add_argument("--schema", default=os.path.join(HERE, "schema.json"))
    v = sub.add_parser("validate")
    v.add_argument("bench")
    v.add_argument("--schema", default=os.path.join(HERE, "schema.json"))
    t = sub.add_parser("table")
    t.add_argument("bench")
    pl = sub.add_parser("plot")
    pl.add_argument("bench")
    pl.add_argument("--png", required=True)
    pl.add_argument("--cairo", action="store_true")
    a = ap.parse_args()
    return {"collect": cmd_collect, "validate": cmd_validate,
            "table": cmd_table, "plot": cmd_plot}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
