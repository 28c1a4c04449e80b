"""Benchmark ``run_evals`` against a fake judge with a fixed latency.

Run from the repository root: ``python bench/run_evals.py`` (``--help`` for options).

500 prompt-alignment items (user mode) are scored at concurrency 16 against
``tests/fake_openai.FakeOpenAI`` (a real HTTP server on 127.0.0.1), whose
responder waits a fixed 100 ms and then returns a valid analysis. With perfect
overlap the run takes items / concurrency × latency = 500 / 16 × 0.1 s =
3.125 s; the script prints the wall time, that ideal and their ratio against
the target ratio of 1.15, best of ``--repeats`` runs.

The fake judge runs two ways (``--server``):

* ``thread``: in this process, in a background thread, as the tests run it. The
  server's handler threads then share this process's GIL with the runner and the
  openai client, so its CPU time is counted against the runner.
* ``process``: the same server in a child process, as a remote judge would be:
  only the runner and the client run here.

"CPU ms per call" is this process's CPU time (all threads) divided by the judge
calls.

Then the whole process: ``python -m scorers run items.jsonl --scorer prompt-alignment``
(the command line, in a child process, with a SQLite store in a temporary directory)
against the fake judge in another process, timed from the child's start to its exit,
imports, dataset loading and store writes included, against the same ideal, and split
at the first judge request and the last reply (start-up, scoring, the end). The store
exists before the timed runs, as a user's does after their first, and the child keeps
Python's bytecode cache (see :func:`measure_process`).

Last, the floor of that whole-process time for any command line built on the official
client, measured in the same run (:func:`measure_floor`): starting Python and importing
``openai`` (best of ``--repeats``, bytecode cached), plus ceil(items / concurrency) rounds
of the judge's latency (the least time ``concurrency`` requests in flight can take). The
floor's ratio to the ideal shows how much of the 1.15 target is left for everything else
(the dataset, the store, the client's work per call). Nothing here asserts on time.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import multiprocessing
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))

import fake_openai  # noqa: E402
from fake_openai import FakeOpenAI, Reply  # noqa: E402
from judge_data import run_payload, single_analysis  # noqa: E402

from scorers import JudgeSettings, ScoreStatus, create_prompt_alignment_scorer, run_evals  # noqa: E402

TARGET_RATIO = 1.15

# socketserver's listen backlog of 5 makes some of 16 simultaneous connects fail ("Connection error").
fake_openai._Server.request_queue_size = 128
REPLY_TEXT = json.dumps(single_analysis(0.9, 0.8, 0.7, 1.0))  # user mode: 0.84


class _InFlight:
    """Counts requests the fake is holding, to report the concurrency actually reached."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.now = 0
        self.peak = 0
        self.first: float | None = None  # time.time() of the first request, and of the last reply
        self.last: float | None = None

    def enter(self) -> None:
        with self._lock:
            self.now += 1
            self.peak = max(self.peak, self.now)
            self.first = self.first or time.time()

    def leave(self) -> None:
        with self._lock:
            self.now -= 1
            self.last = time.time()

    def stats(self, fake: FakeOpenAI) -> dict:
        """Report and reset the counters."""
        with self._lock:
            out = {"calls": fake.chat_call_count, "peak": self.peak, "first": self.first, "last": self.last}
            fake.reset()
            self.peak, self.first, self.last = 0, None, None
        return out


def _fake_judge(latency: float) -> tuple[FakeOpenAI, _InFlight]:
    in_flight = _InFlight()

    def responder(_request: dict) -> Reply:
        # The wait happens here rather than in Reply.delay so the in-flight count covers it.
        in_flight.enter()
        try:
            time.sleep(latency)
        finally:
            in_flight.leave()
        return Reply.content(REPLY_TEXT)

    return FakeOpenAI(responder=responder), in_flight


def _serve_in_child(latency: float, conn) -> None:
    fake, in_flight = _fake_judge(latency)
    with fake:
        conn.send(fake.base_url)
        while conn.recv() != "stop":  # "stats": report and reset the counters
            conn.send(in_flight.stats(fake))


@contextlib.contextmanager
def judge_server(mode: str, latency: float) -> Iterator[tuple[str, object]]:
    """Yield ``(base_url, stats)``; ``stats()`` returns and resets ``{"calls", "peak", "first", "last"}``."""
    if mode == "thread":
        fake, in_flight = _fake_judge(latency)
        with fake:
            yield fake.base_url, lambda: in_flight.stats(fake)
        return
    parent, child = multiprocessing.get_context("fork").Pipe()
    process = multiprocessing.get_context("fork").Process(target=_serve_in_child, args=(latency, child), daemon=True)
    process.start()
    try:
        base_url = parent.recv()

        def stats() -> dict:
            parent.send("stats")
            return parent.recv()

        yield base_url, stats
    finally:
        parent.send("stop")
        process.join(timeout=5)


def measure(mode: str, args: argparse.Namespace) -> dict:
    items = [
        {"id": f"item-{i}", **run_payload(user=f"Write a Python factorial function (variant {i}).")}
        for i in range(args.items)
    ]
    best: dict | None = None
    walls: list[float] = []
    with judge_server(mode, args.latency) as (base_url, stats):
        settings = JudgeSettings(
            model="openai/gpt-4o-mini", base_url=base_url, api_key="bench-key", timeout=30.0, max_retries=0
        )
        for _ in range(args.repeats):
            scorer = create_prompt_alignment_scorer(options={"evaluation_mode": "user"}, settings=settings)
            cpu = time.process_time()
            started = time.perf_counter()
            result = run_evals(items, [scorer], concurrency=args.concurrency)
            wall = time.perf_counter() - started
            cpu = time.process_time() - cpu
            served = stats()
            scored = sum(o.status is ScoreStatus.SCORED for o in result.outcomes)
            if scored != args.items or served["calls"] != args.items:
                raise SystemExit(
                    f"{mode}: {scored} of {args.items} scored with {served['calls']} calls: not a clean run"
                )
            run = {"wall": wall, "cpu": cpu, **served}
            walls.append(wall)
            best = run if best is None or wall < best["wall"] else best
    return {**best, "walls": walls}


def measure_process(args: argparse.Namespace) -> dict:
    """Wall time of ``python -m scorers run`` on the items, best of ``--repeats``, with the judge in a process.

    Every timed run writes to one store that exists before the first (as a user's store does after
    their first run; creating one runs the Alembic migrations), and runs with Python's bytecode cache
    as an installed package has it (``PYTHONDONTWRITEBYTECODE`` is dropped for the child: the first
    command compiles the modules). The fake judge notes when the first request arrived and the last
    reply left, which splits the wall time into start-up, scoring and the end.
    """
    runs: list[dict] = []
    with tempfile.TemporaryDirectory() as tmp, judge_server("process", args.latency) as (base_url, stats):
        data = Path(tmp) / "items.jsonl"
        with data.open("w", encoding="utf-8") as out:
            for i in range(args.items):
                out.write(json.dumps({"id": f"item-{i}", "input": f"Write a Python factorial function ({i}).",
                                      "output": "def factorial(n): return 1 if n < 2 else n * factorial(n - 1)"}) + "\n")  # fmt: skip
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "SCORER_STUDIO_"))}
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env.update(OPENAI_API_KEY="bench-key", HOME=tmp)
        db = str(Path(tmp) / "studio.db")
        subprocess.run([sys.executable, "-m", "scorers", "runs", "--db", db], cwd=REPO, env=env, capture_output=True, check=True)  # fmt: skip
        for _ in range(args.repeats):
            command = [
                sys.executable, "-m", "scorers", "run", str(data), "--scorer", "prompt-alignment", "--mode", "user",
                "--concurrency", str(args.concurrency), "--base-url", base_url, "--model", "openai/gpt-4o-mini",
                "--db", db, "--no-cache", "--yes",
            ]  # fmt: skip
            started_at = time.time()
            started = time.perf_counter()
            done = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, check=False)
            wall = time.perf_counter() - started
            served = stats()
            if done.returncode != 0 or served["calls"] != args.items:
                raise SystemExit(
                    f"the command line exited {done.returncode} after {served['calls']} calls:\n{done.stderr}"
                )
            runs.append(
                {
                    "wall": wall,
                    "start_up": served["first"] - started_at,
                    "scoring": served["last"] - served["first"],
                    "end": started_at + wall - served["last"],
                }
            )
    best = min(runs, key=lambda r: r["wall"])
    return {**best, "walls": [r["wall"] for r in runs]}


def measure_floor(args: argparse.Namespace) -> dict:
    """The least wall time of a command line that scores the items through the official client.

    Returns:
        ``{"import": s, "rounds": s, "wall": s}``: the best of ``--repeats`` child runs of
        ``python -c "import openai"`` (interpreter start-up included, bytecode cached as in
        :func:`measure_process`), ceil(items / concurrency) × latency, and their sum.
    """
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    imports = []
    for _ in range(max(args.repeats, 1)):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", "import openai"], cwd=REPO, env=env, check=True)
        imports.append(time.perf_counter() - started)
    rounds = math.ceil(args.items / args.concurrency) * args.latency
    return {"import": min(imports), "rounds": rounds, "wall": min(imports) + rounds}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=500)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--latency", type=float, default=0.100, help="seconds the fake judge waits per request")
    parser.add_argument("--repeats", type=int, default=3, help="runs per server mode; the fastest is reported")
    parser.add_argument("--server", choices=("thread", "process", "both"), default="both")
    args = parser.parse_args()

    ideal = args.items / args.concurrency * args.latency
    print(
        f"items: {args.items}, concurrency: {args.concurrency}, judge latency: {args.latency * 1000:.0f} ms, "
        f"best of {args.repeats}; load average at start: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs"
    )
    print(f"ideal (items / concurrency x latency): {ideal:.3f} s; target wall/ideal <= {TARGET_RATIO}")
    for mode in ("thread", "process") if args.server == "both" else (args.server,):
        m = measure(mode, args)
        ratio = m["wall"] / ideal
        print(
            f"fake judge in a {mode:7s}: wall {m['wall']:.3f} s, ratio {ratio:.3f} "
            f"({'met' if ratio <= TARGET_RATIO else 'NOT met'}); peak in flight {m['peak']}, "
            f"CPU {m['cpu'] * 1000 / m['calls']:.2f} ms per call in this process; "
            f"every run: {', '.join(f'{w:.2f}' for w in m['walls'])} s"
        )
    whole = measure_process(args)
    ratio = whole["wall"] / ideal
    print(
        f"whole process (python -m scorers run, judge in a process): wall {whole['wall']:.3f} s, ratio {ratio:.3f} "
        f"({'met' if ratio <= TARGET_RATIO else 'NOT met'}); every run: {', '.join(f'{w:.2f}' for w in whole['walls'])} s"
    )
    print(
        f"  the fastest: {whole['start_up']:.3f} s from the start to the first judge request (imports, dataset, store, "
        f"estimate), {whole['scoring']:.3f} s from it to the last reply, {whole['end']:.3f} s "
        f"from that to the exit (the last writes, the summary); load average at the end: {os.getloadavg()[0]:.2f}"
    )
    floor = measure_floor(args)
    print(
        f"floor of any command line on the official client: {floor['wall']:.3f} s, ratio {floor['wall'] / ideal:.3f} = "
        f"{floor['import']:.3f} s to start Python and import openai + {floor['rounds']:.3f} s of judge latency "
        f"({math.ceil(args.items / args.concurrency)} rounds of {args.concurrency}); the target allows "
        f"{(TARGET_RATIO - 1) * ideal:.3f} s over the ideal, this command line took {whole['wall'] - floor['wall']:.3f} s over the floor"
    )


if __name__ == "__main__":
    main()
