"""Summarize a pytest-benchmark JSON file (``--benchmark-json=out.json``) as a markdown table.

    python bench/summarize.py bench.json [--stat median]

One row per benchmark group: the chosen statistic (median by default) for fastgen with 1 and 2
threads and for scikit-learn, and the speed-ups sklearn/fastgen (>1 means fastgen is faster).
Contender and thread count are read from ``extra_info`` (set by bench/conftest.py), falling back to
the test's parameters.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections import defaultdict

COLUMNS = (("fastgen", 1), ("fastgen", 2), ("sklearn", 1))


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
    for bench in data.get("benchmarks", []):
        group = bench.get("group") or bench.get("name")
        table[group][_contender(bench)] = bench["stats"][stat]

    lines = [
        "| group | fastgen 1 thread | fastgen 2 threads | sklearn | sklearn/fastgen (1t) | "
        "sklearn/fastgen (2t) |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for group in sorted(table):
        row = table[group]
        f1, f2, sk = (row.get(c) for c in COLUMNS)
        lines.append(
            f"| {group} | {fmt_time(f1)} | {fmt_time(f2)} | {fmt_time(sk)} | "
            f"{fmt_ratio(sk, f1)} | {fmt_ratio(sk, f2)} |"
        )
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
