"""Summarize a pytest-benchmark JSON file (``--benchmark-json=out.json``) as a markdown table.

    python bench/summarize.py bench.json [--stat median]

One row per benchmark group: the chosen statistic (median by default) for fastgen with 1 and 2
threads and for scikit-learn, and the speed-ups sklearn/fastgen (>1 means fastgen is faster).
Contender and thread count are read from ``extra_info`` (set by bench/conftest.py), falling back to
the test's parameters.

When scikit-learn was also run with 2 threads (the Gaussian-family benchmarks, marked
``threaded_blas``), a "sklearn 2 threads" column is added and the 2-thread speed-up compares the two
2-thread runs; for groups where scikit-learn only ran with one thread (its naive Bayes text models are
single-threaded) the 2-thread speed-up is against that single run, as before.

Paired groups (``extra_info`` with ``paired_ratio_median``: fastgen's rounds each right after a
timed scikit-learn run, bench_text.py's ``fit-paired``) get a table of their own: the statistic for
both, their ratio, and the median of the per-round ratios.

Groups whose dataset part ends in ``-nanNN`` (fastgen only: NN% of the entries missing) get a second
table: their time divided by that of the same group on complete data, the cost of missing values.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from collections import defaultdict

COLUMNS = (("fastgen", 1), ("fastgen", 2), ("sklearn", 1))
NAN_GROUP = re.compile(r"^(?P<base>.+)-nan(?P<pct>\d+)$")


def _contender(bench) -> tuple[str, int]:
    extra = bench.get("extra_info") or {}
    params = bench.get("params") or {}
    name = extra.get("contender") or params.get("contender")
    if isinstance(name, dict):  # not stripped by the conftest hook
        name = name.get("name")
    if name is None:  # last resort: the parameter id, e.g. "fastgen-2t-multinomial-sms"
        name = (bench.get("param") or "").split("-")[0]
    threads = extra.get("n_threads", params.get("n_threads", 1))
    return str(name), int(threads)


def fmt_time(seconds: float | None) -> str:
    if seconds is None or (isinstance(seconds, float) and math.isnan(seconds)):
        return "—"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6), ("ns", 1e-9)):
        if seconds >= scale:
            value = seconds / scale
            break
    else:
        unit, value = "ns", seconds / 1e-9
    return f"{value:.3g} {unit}" if value < 100 else f"{value:.0f} {unit}"


def fmt_ratio(num: float | None, den: float | None) -> str:
    if not num or not den:
        return "—"
    r = num / den
    return f"{r:.1f}×" if r >= 10 else f"{r:.2f}×"


def summarize(data: dict, stat: str = "median") -> str:
    table: dict[str, dict[tuple[str, int], float]] = defaultdict(dict)
    paired = {}
    for bench in data.get("benchmarks", []):
        group = bench.get("group") or bench.get("name")
        extra = bench.get("extra_info") or {}
        if "paired_ratio_median" in extra:
            paired[group] = (bench["stats"][stat], extra[f"paired_sklearn_{stat}"],
                             extra["paired_ratio_median"])
        else:
            table[group][_contender(bench)] = bench["stats"][stat]

    sk2 = any(("sklearn", 2) in row for row in table.values())
    lines = [
        "| group | fastgen 1 thread | fastgen 2 threads | sklearn | "
        + ("sklearn 2 threads | " if sk2 else "")
        + "sklearn/fastgen (1t) | sklearn/fastgen (2t) |",
        "|---|---:|---:|---:|" + ("---:|" if sk2 else "") + "---:|---:|",
    ]
    for group in sorted(table):
        row = table[group]
        f1, f2, sk = (row.get(c) for c in COLUMNS)
        sk_2t = row.get(("sklearn", 2))
        lines.append(
            f"| {group} | {fmt_time(f1)} | {fmt_time(f2)} | {fmt_time(sk)} | "
            + (f"{fmt_time(sk_2t)} | " if sk2 else "")
            + f"{fmt_ratio(sk, f1)} | {fmt_ratio(sk_2t if sk_2t else sk, f2)} |"
        )
    if paired:
        lines += [
            "",
            "Paired (one thread; each fastgen round right after a scikit-learn run of the same data):",
            "",
            "| group | fastgen | sklearn | sklearn/fastgen | median of the per-round ratios |",
            "|---|---:|---:|---:|---:|",
            *(f"| {group} | {fmt_time(f)} | {fmt_time(sk)} | {fmt_ratio(sk, f)} | "
              f"{fmt_ratio(ratio, 1.0)} |" for group, (f, sk, ratio) in sorted(paired.items())),
        ]
    nan_rows = []
    for group in sorted(table):
        m = NAN_GROUP.match(group)
        if m and m["base"] in table:
            row, base = table[group], table[m["base"]]
            f1, f2 = row.get(("fastgen", 1)), row.get(("fastgen", 2))
            b1, b2 = base.get(("fastgen", 1)), base.get(("fastgen", 2))
            nan_rows.append(
                f"| {group} | {m['pct']}% | {fmt_time(f1)} | {fmt_time(f2)} | "
                f"{fmt_ratio(f1, b1)} | {fmt_ratio(f2, b2)} |"
            )
    if nan_rows:
        lines += [
            "",
            ("Cost of missing values (fastgen, marginalised; time with NaN / time on the same data "
             "complete):"),
            "",
            ("| group | missing | fastgen 1 thread | fastgen 2 threads | NaN/complete (1t) | "
             "NaN/complete (2t) |"),
            "|---|---:|---:|---:|---:|---:|",
            *nan_rows,
        ]
    meta = data.get("fastgen_bench") or {}
    if meta:
        versions = ", ".join(f"{k} {v}" for k, v in (meta.get("versions") or {}).items() if v)
        machine = data.get("machine_info") or {}
        cpu = (machine.get("cpu") or {}).get("brand_raw") or machine.get("processor") or ""
        lines.append("")
        lines.append(
            f"{stat.capitalize()}s; --bench-size={meta.get('bench_size')}; {versions}; "
            f"OpenMP: {meta.get('openmp_enabled')}; {cpu}".rstrip("; ")
        )
        loads = [b.get("extra_info", {}).get("loadavg_1min") for b in data.get("benchmarks", [])]
        loads = [x for x in loads if x is not None]
        ncpu = meta.get("cpu_count")
        if loads and ncpu and max(loads) > ncpu + 0.5:  # the run itself accounts for 1-2
            lines.append(
                f"Warning: 1-min load average reached {max(loads):.2f} on {ncpu} CPUs during the run; "
                "timings (especially with 2 threads) may be distorted by other processes."
            )
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("json_file", help="file written by pytest --benchmark-json")
    parser.add_argument("--stat", default="median", choices=("median", "mean", "min", "max"),
                        help="statistic to report (default: median)")
    args = parser.parse_args(argv)
    with open(args.json_file, encoding="utf-8") as f:
        data = json.load(f)
    print(summarize(data, args.stat))
    return 0


if __name__ == "__main__":
    sys.exit(main())
