"""Benchmark ``run_evals`` with the textual difference scorer over many short rows.

Run from the repository root: ``python bench/textual_difference_rows.py``
(``--rows`` to change the 100,000 rows).

Each row is a pair of about 500 characters built from a seeded random word list:
the reference, and a response with one to three words replaced, deleted or
inserted. The same rows are scored three ways, each in a fresh child process so
that its peak memory is its own:

* ``plain loop``: ``[scorer.run(payload) for payload in payloads]``, the baseline;
* ``run_evals`` at concurrency 1 and at the default concurrency 8 (no store);
* ``run_evals`` at concurrency 8 writing to a SQLite store in a temporary file (the CLI
  and dashboard path; the target is within 1.5x of the plain loop), and the same kept in the
  run's thread (the path before the worker process, for comparison under the same load).

For each the script prints where the items were scored (``scored in``: a large run of
CPU-bound scorers is scored in worker processes, one per CPU, :mod:`scorers.runs.scoring_process`,
else in a thread), rows per second, the ratio to the plain loop in the call (``x plain``) and for
the whole child process, imports and row generation included (``process x plain``), the
CPU time of the scoring (user + system, all threads, and the worker processes' too: less
sensitive than wall time to other load on the machine) and its ratio, the peak RSS of the
child (``resource.getrusage(...).ru_maxrss``) and how much of it scoring added on top of the
generated rows, the worker processes' own peak RSS, summed (``VmHWM`` in ``/proc/PID/status``, read
once each has returned every chunk; their ``ru_maxrss`` would count the run's process too, whose
memory they shared until their ``exec``), the sum of both (at most what all held at once), and the
sum of the scores (all must agree). With worker processes the wall-time ratio is met by using the other cores: the
CPU ratio beside it says what the run costs in all. The load average (2 cores shared with
other work) is printed at the start and the end. Nothing here asserts on time.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from scorers import EvalItem, ScoreStatus, Store, create_textual_difference_scorer, run_evals  # noqa: E402
from scorers.runs import scoring_process  # noqa: E402

SEED = 20250101
TEXT_CHARS = 500
VARIANTS = (
    ("plain loop", None, False, False),
    ("run_evals, concurrency 1", 1, False, False),
    ("run_evals, concurrency 8", 8, False, False),
    ("run_evals, concurrency 8, SQLite store", 8, True, False),
    ("the same, in a thread", 8, True, True),
)


def make_rows(n: int) -> list[dict]:
    """``n`` payloads: a ~500-character reference and a response with 1 to 3 word edits."""
    rng = random.Random(SEED)
    vocabulary = [
        "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(2, 10))) for _ in range(5000)
    ]
    rows = []
    for _ in range(n):
        words: list[str] = []
        size = -1
        while size < TEXT_CHARS:
            words.append(rng.choice(vocabulary))
            size += len(words[-1]) + 1
        reference = " ".join(words)
        edited = list(words)
        for _ in range(rng.randint(1, 3)):
            at = rng.randrange(len(edited))
            kind = rng.random()
            if kind < 1 / 3:
                edited[at] = rng.choice(vocabulary)
            elif kind < 2 / 3 and len(edited) > 1:
                del edited[at]
            else:
                edited.insert(at, rng.choice(vocabulary))
        rows.append({"input": "Repeat the reference text.", "output": " ".join(edited), "ground_truth": reference})
    return rows


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB


WORKER_PEAK_MB = [0.0]
"""The worker processes' peak RSS, summed, noted by :func:`note_worker_peak` (0 when the run had none)."""


def note_worker_peak() -> None:
    """Add each worker process's peak RSS as the run closes it (every chunk has come back by then)."""
    close = scoring_process.ScoringProcess.close

    def noting_close(self: scoring_process.ScoringProcess) -> None:
        status = Path(f"/proc/{self.pid}/status").read_text()
        kib = next(int(line.split()[1]) for line in status.splitlines() if line.startswith("VmHWM:"))
        WORKER_PEAK_MB[0] += kib / 1024
        close(self)

    scoring_process.ScoringProcess.close = noting_close


def cpu_seconds() -> float:
    """CPU seconds (user + system) of this process and its descendants: the children it has waited
    for (``RUSAGE_CHILDREN``), and, from ``/proc``, its live children (the fork server) with the
    children they have waited for (the scoring process)."""
    total = 0.0
    for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN):
        usage = resource.getrusage(who)
        total += usage.ru_utime + usage.ru_stime
    tick = os.sysconf("SC_CLK_TCK")
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()  # after the command name: state, ppid, ...
        except OSError:  # it ended meanwhile
            continue
        if int(fields[1]) == os.getpid():
            total += sum(int(f) for f in fields[11:15]) / tick  # utime, stime, cutime, cstime
    return total


def child(rows: int, concurrency: int | None, with_store: bool, in_thread: bool) -> None:
    """Score the rows one way and print one JSON line with the measurements."""
    if in_thread:  # the run's own thread whatever its size: the path before the worker process
        scoring_process.PROCESS_MIN_ITEMS = rows + 1
    note_worker_peak()
    payloads = make_rows(rows)
    scorer = create_textual_difference_scorer()
    scorer.run(payloads[0])  # import and warm-up outside the timing
    rss_before = peak_rss_mb()
    cpu = cpu_seconds()
    path = "-"
    if concurrency is None:
        started = time.perf_counter()
        results = [scorer.run(payload) for payload in payloads]
        seconds = time.perf_counter() - started
        scores = [r.score for r in results]
    else:
        items = [EvalItem(f"row-{i}", payload) for i, payload in enumerate(payloads)]
        path = "worker process" if scoring_process.packed_scorers([scorer], rows) is not None else "thread"
        with tempfile.TemporaryDirectory() as tmp:
            store = Store(Path(tmp) / "bench.db") if with_store else None
            started = time.perf_counter()
            result = run_evals(items, [scorer], concurrency=concurrency, store=store)
            seconds = time.perf_counter() - started
            if store is not None:
                stored = store.query("SELECT COUNT(*) FROM results")[0][0]
                store.close()
                if stored != rows:
                    raise SystemExit(f"the store holds {stored} results, not {rows}")
        if any(o.status is not ScoreStatus.SCORED for o in result.outcomes) or len(result.outcomes) != rows:
            raise SystemExit("run_evals did not score every row")
        scores = [o.score for o in result.outcomes]
    cpu = cpu_seconds() - cpu
    print(
        json.dumps(
            {
                "seconds": seconds,
                "cpu": cpu,
                "path": path,
                "peak_mb": peak_rss_mb(),
                "worker_peak_mb": WORKER_PEAK_MB[0],
                "rows_mb": rss_before,
                "score_sum": sum(scores),
                "mean_chars": sum(len(p["ground_truth"]) for p in payloads) / rows,
            }
        )
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--child", type=int, default=None, help=argparse.SUPPRESS)  # -1: plain loop
    parser.add_argument("--store", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--thread", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        child(args.rows, None if args.child < 0 else args.child, args.store, args.thread)
        return

    print(f"rows: {args.rows:,} pairs of ~{TEXT_CHARS} characters (seed {SEED}), 1-3 word edits each")
    print(f"load average at the start: {' '.join(f'{x:.2f}' for x in os.getloadavg())} ({os.cpu_count()} CPUs)")
    header = (
        "variant",
        "scored in",
        "seconds",
        "rows/s",
        "x plain",
        "process s",
        "process x plain",
        "CPU s",
        "CPU x plain",
        "peak RSS MB",
        "added by scoring MB",
        "worker peak MB",
        "both MB",
        "sum of scores",
    )
    table = [header]
    baseline = baseline_cpu = baseline_process = None
    sums = set()
    for name, concurrency, with_store, in_thread in VARIANTS:
        process_started = time.perf_counter()
        out = subprocess.run(
            [
                sys.executable,
                __file__,
                "--rows",
                str(args.rows),
                "--child",
                str(-1 if concurrency is None else concurrency),
                *(["--store"] if with_store else []),
                *(["--thread"] if in_thread else []),
            ],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        process = time.perf_counter() - process_started
        m = json.loads(out.strip().splitlines()[-1])
        baseline = baseline or m["seconds"]
        baseline_process = baseline_process or process
        baseline_cpu = baseline_cpu or m["cpu"]
        sums.add(round(m["score_sum"], 6))
        table.append(
            (
                name,
                m["path"],
                f"{m['seconds']:.2f}",
                f"{args.rows / m['seconds']:,.0f}",
                f"{m['seconds'] / baseline:.2f}",
                f"{process:.2f}",
                f"{process / baseline_process:.2f}",
                f"{m['cpu']:.2f}",
                f"{m['cpu'] / baseline_cpu:.2f}",
                f"{m['peak_mb']:,.0f}",
                f"{m['peak_mb'] - m['rows_mb']:,.0f}",
                f"{m['worker_peak_mb']:,.0f}" if m["worker_peak_mb"] else "-",
                f"{m['peak_mb'] + m['worker_peak_mb']:,.0f}",
                f"{m['score_sum']:.6f}",
            )
        )
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    for i, row in enumerate(table):
        print(
            "  ".join(
                cell.rjust(w) if j else cell.ljust(w) for j, (cell, w) in enumerate(zip(row, widths, strict=True))
            )
        )
        if i == 0:
            print("  ".join("-" * w for w in widths))
    print("scores agree across variants" if len(sums) == 1 else f"SCORES DIFFER: {sorted(sums)}")
    print(f"load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
