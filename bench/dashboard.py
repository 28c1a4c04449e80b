"""Benchmark the run views of the dashboard in a real browser, on runs of the sizes people upload.

Run from the repository root: ``python bench/dashboard.py`` (``--items`` to change the
10,000 items; ``--chromium`` for another Chromium than ``$CHROMIUM_PATH`` or
``/usr/bin/chromium``; ``--compare-only`` for History's open of the run, which reads run A as
the whole flow does, and Compare's two steps, without the 20 kB run: about a minute a server). Nothing
here asserts on time.

Three runs are built in a temporary database, their outcomes written through
``Store.save_results`` as ``run_evals`` writes them:

* ``20,000 outcomes``: 10,000 items of about 500 characters, each scored by textual
  difference (the real scorer) and by prompt alignment (the real scorer's results against
  a fake judge, 20 different analyses reused across the items, so the stored rows have
  the real shape and size), and the same items scored again with every tenth textual
  difference score 0.1 lower (run B of Compare's Run vs run);
* ``20 kB responses``: 20,000 items whose response is about 20 kB, scored by textual
  difference (records of the real shape, not recomputed: only the view is measured).

For each, ``streamlit run app.py`` is started on a free port with that database, and
Debian's Chromium (through Playwright) opens ``/history?run=ID``. The script prints,
in seconds of wall time seen by the browser (they include the browser's drawing and are
an upper bound of the server's time):

* ``open the run``: from the navigation to the run's status line, and until the script
  is idle (Streamlit's running indicator gone);
* ``draw the charts (N)``: from a click on the Distributions tab until each of its N Plotly
  charts is drawn (its script run over, then every chart's first SVG layer visible);
* ``apply a filter``: from typing a search in the rows table until the page is idle
  with the filtered rows;
* ``come back from another page``: from a click on History in the sidebar, after visiting
  Evaluate, until the run's view is idle again;
* ``Compare: open run vs run``: ``/compare?run=ID`` of the rescored run (Run vs run against
  the first run, on its Row by row view: the gate's verdict is worked out in its CI gate view,
  not on this open), until its counts are shown and the script is idle; then
  ``back to the Run vs run tab`` from the Comparison tab (a rerun);
* ``Review: open the run``: ``/review?run=ID`` until the first row is shown and the script
  is idle; then ``next row`` (key J, a rerun);

each the median of ``--repeat`` servers (3 by default; the range of the wall times in brackets: every
server is new, so each open is a first one, with nothing cached), with the server process's CPU time
(its median) over the same span (user + system, from
``/proc/<pid>/stat``: on a shared machine it varies less than the wall time), and the
server process's peak RSS (``VmHWM`` of ``/proc/<pid>/status``, the largest of the servers). The targets
(from the issue) are printed beside the number each is about, with "met" or "NOT met": every rerun with
the run open (the charts' tab, a filter, coming back, Compare's tab, Review's next row) under 1 s of
server CPU; every open under 2 s of wall time, and the open followed by the charts (``open the run with
its charts``: the two steps' sum, server by server) too; under 1.5 GB for the 20 kB run. The machine's load
average is printed first: on a shared machine the times grow with it.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from statistics import median
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))

from fake_openai import FakeOpenAI, Reply  # noqa: E402
from judge_data import single_analysis  # noqa: E402
from playwright.sync_api import Page, expect, sync_playwright  # noqa: E402

from scorers import (  # noqa: E402
    EvalItem,
    JudgeSettings,
    Store,
    create_prompt_alignment_scorer,
    create_textual_difference_scorer,  # noqa: E402
    run_evals,
)

SEED = 20250101
RERUN_TARGET_S = 1.0
OPEN_TARGET_S = 2.0
RSS_TARGET_MB = 1536
TIMEOUT_MS = 180_000


def _words(rng: random.Random, n_chars: int) -> str:
    vocabulary = ["alpha", "beta", "gamma", "delta", "answer", "prompt", "score", "judge", "text", "words"]
    out: list[str] = []
    size = 0
    while size < n_chars:
        out.append(rng.choice(vocabulary) + str(rng.randint(0, 99)))
        size += len(out[-1]) + 1
    return " ".join(out)


def _pa_records(n_variants: int) -> list[dict[str, Any]]:
    """Stored records of real prompt-alignment results (user mode) against a fake judge."""
    rng = random.Random(SEED)
    replies = [single_analysis(*(round(rng.uniform(0.3, 1.0), 2) for _ in range(4))) for _ in range(n_variants)]
    with FakeOpenAI() as judge:
        calls = iter(range(10**9))
        judge.responder = lambda _body: Reply.json(replies[next(calls) % n_variants])
        settings = JudgeSettings(model="openai/fake-judge", base_url=judge.base_url, api_key="bench-key")
        scorer = create_prompt_alignment_scorer(options={"evaluation_mode": "user"}, settings=settings)
        items = [EvalItem(f"v{i}", {"input": f"Question {i}?", "output": f"Answer {i}."}) for i in range(n_variants)]
        result = run_evals(items, [scorer], concurrency=1)
    return [o.to_record() for o in result.outcomes]


def build_runs(db: Path, n_items: int, n_big: int) -> tuple[str, str, str | None]:
    """The benchmark runs in ``db``: (the 20,000-outcome run, its rescoring with lower scores, the 20 kB run;
    None when ``n_big`` is 0)."""
    rng = random.Random(SEED)
    store = Store(db)
    td = create_textual_difference_scorer()
    pa = _pa_records(20)
    items = []
    for i in range(n_items):
        reference = _words(rng, 500)
        response = reference.replace("alpha", "omega", rng.randint(0, 3))
        payload = {
            "input": {"inputMessages": [{"role": "user", "content": f"Repeat this text ({i})."}], "systemMessages": []},
            "output": {"text": response},
            "ground_truth": reference,
        }
        items.append((f"q{i:05d}", payload, {"model": f"model-{i % 3}"}, {"votes": i % 5}))
    spec: dict[str, Any] = {
        "dataset_name": "bench-20k-outcomes.csv",
        "items": items,
        "scorers": [
            {"id": td.id, "name": td.name, "options": {}},
            {"id": "prompt-alignment", "name": "", "options": {}},
        ],
        "judge": {"model": "openai/fake-judge", "baseUrl": "http://127.0.0.1:9/v1", "temperature": 0, "seed": 0},
        "mapping": {"input": "prompt", "output": "response", "ground_truth": "reference", "id": "id"},
        "config": {"scorerOptions": {td.id: {}, "prompt-alignment": {"evaluation_mode": "user"}}},
    }
    run_id = store.create_run(**spec)
    records = []
    for i, (_, payload, _, _) in enumerate(items):
        records.append((i, td.id, {**_td_record(td.run(payload))}))
        records.append((i, "prompt-alignment", pa[i % len(pa)]))
    store.save_results(run_id, records)
    store.finish_run(run_id, "completed")
    # Run B of Run vs run: the same items scored again, every tenth textual-difference score 0.1 lower.
    rerun_id = store.create_run(**spec)
    lowered = [
        (i, sid, {**record, "score": max(0.0, record["score"] - 0.1)} if sid == td.id and i % 10 == 0 else record)
        for i, sid, record in records
    ]
    store.save_results(rerun_id, lowered)
    store.finish_run(rerun_id, "completed")
    if not n_big:
        store.close()
        return run_id, rerun_id, None

    big_items = []
    big_records = []
    text = _words(rng, 20_000)
    for i in range(n_big):
        response = f"{i} " + text
        big_items.append((f"long{i:05d}", {"input": f"Write at length ({i}).", "output": response}, {}, {}))
        ratio = 2 * 20 / (20 + len(response))
        big_records.append(
            (
                i,
                td.id,
                {
                    "status": "scored",
                    "score": ratio * 0.001,
                    "reason": "The response matches the input at <1% similarity (3000 word-level changes).",
                    "analysis": {"ratio": ratio, "changes": 3000, "lengthDiff": 0.999, "confidence": 0.001},
                    "details": {"comparedWith": "input"},
                    "latency_s": 0.01,
                },
            )
        )
    big_id = store.create_run(
        dataset_name="bench-20kB-responses.csv",
        items=big_items,
        scorers=[{"id": td.id, "name": td.name, "options": {}}],
        judge=None,
    )
    store.save_results(big_id, big_records)
    store.finish_run(big_id, "completed")
    store.close()
    return run_id, rerun_id, big_id


def _td_record(result: Any) -> dict[str, Any]:
    return {
        "status": "scored",
        "score": result.score,
        "reason": result.reason,
        "analysis": result.analyze_step_result,
        "details": result.details,
        "latency_s": 0.0005,
    }


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far, in seconds (``/proc/<pid>/stat``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime: fields 14, 15


def peak_rss_mb(pid: int) -> float:
    """``VmHWM`` (peak resident set size) of a process, in MiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmHWM for process {pid}")


@contextmanager
def streamlit_server(db: Path, tmp: Path) -> Iterator[tuple[str, int]]:
    """``streamlit run app.py`` on a free port with ``db``; yields (URL, pid)."""
    home = tmp / f"home-{time.monotonic_ns()}"
    home.mkdir()
    # PYTHONDONTWRITEBYTECODE is dropped so the server loads our modules from Python's bytecode cache,
    # as an installed dashboard does (with it, every first visit of a page compiled its modules again).
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("OPENAI_", "STREAMLIT_")) and k != "PYTHONDONTWRITEBYTECODE"
    }
    env.update(HOME=str(home), SCORER_STUDIO_DB=str(db), PYTHONUNBUFFERED="1")
    port = _free_port()
    command = [
        sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
        "--server.port", str(port), "--server.address", "127.0.0.1", "--server.fileWatcherType", "none",
        "--secrets.files", str(tmp / "no-secrets.toml"),
    ]  # fmt: skip
    log = (tmp / "streamlit.log").open("ab")
    process = subprocess.Popen(
        command, cwd=REPO, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
        start_new_session=True,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
                    if response.read().strip() == b"ok":
                        break
            except OSError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"streamlit did not start; see {tmp / 'streamlit.log'}")
            time.sleep(0.2)
        yield url, process.pid
    finally:
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(process.pid, sig)
                process.wait(timeout=10)
                break
            except (ProcessLookupError, subprocess.TimeoutExpired):
                continue
        log.close()


def _idle(page: Page) -> None:
    expect(page.get_by_test_id("stStatusWidget")).to_have_count(0, timeout=TIMEOUT_MS)


def timed(pid: int, action: Callable[[], None]) -> tuple[float, float]:
    """Run ``action``: (wall seconds, CPU seconds of the server process ``pid``) it took."""
    started, cpu = time.perf_counter(), cpu_seconds(pid)
    action()
    return time.perf_counter() - started, cpu_seconds(pid) - cpu


def measure_compare(page: Page, url: str, pid: int, run_b: str) -> dict[str, tuple[float, float]]:
    """Open ``/compare?run=run_b`` (Run vs run, the next older run as A), then come back to that tab from another one.

    Returns:
        Step → (wall seconds seen by the browser, CPU seconds of the server process ``pid``).
    """
    compared = page.get_by_test_id("stMetricLabel").get_by_text("Outcomes compared", exact=True)
    tab = page.get_by_role("tab", name="3. Run vs run")

    def open_run() -> None:
        page.goto(f"{url}/compare?run={run_b}")
        expect(compared).to_be_visible(timeout=TIMEOUT_MS)
        _idle(page)

    out = {"Compare: open run vs run": timed(pid, open_run)}
    page.get_by_role("tab", name="2. Comparison").click()
    expect(tab).to_have_attribute("aria-selected", "false", timeout=TIMEOUT_MS)
    # Until the rerun the click asked for has drawn the tabs again, Streamlit disables every tab and a click
    # on one is lost; the idle check alone can pass before that rerun has even started. The Comparison
    # tab's own content (built only when open) is drawn after the tabs.
    comparison = page.get_by_role("tabpanel", name="2. Comparison").get_by_test_id("stElementContainer")
    expect(comparison.first).to_be_visible(timeout=TIMEOUT_MS)
    _idle(page)

    def back() -> None:
        tab.click()
        expect(compared).to_be_visible(timeout=TIMEOUT_MS)
        _idle(page)

    out["Compare: back to the Run vs run tab"] = timed(pid, back)
    return out


def measure_review(page: Page, url: str, pid: int, run_id: str) -> dict[str, tuple[float, float]]:
    """Open ``/review?run=run_id`` until its first row is shown, then step to the next row (key J).

    Returns:
        Step → (wall seconds seen by the browser, CPU seconds of the server process ``pid``).
    """
    heading = page.get_by_test_id("stMarkdownContainer").filter(has_text="Row ").filter(has_text="(all rows)")

    def open_run() -> None:
        page.goto(f"{url}/review?run={run_id}")
        expect(heading).to_be_visible(timeout=TIMEOUT_MS)
        # The row is usable once its Next button is: J does nothing until that button (and its
        # shortcut) is on the page, which can be after the script run has ended.
        expect(page.get_by_role("button", name="Next")).to_be_enabled(timeout=TIMEOUT_MS)
        _idle(page)

    out = {"Review: open the run": timed(pid, open_run)}
    before = heading.inner_text()

    def next_row() -> None:
        page.keyboard.press("j")
        expect(heading).not_to_have_text(before, timeout=TIMEOUT_MS)
        _idle(page)

    out["Review: next row"] = timed(pid, next_row)
    return out


def measure_views(
    page: Page, url: str, pid: int, run_id: str, n_items: int, *, full: bool
) -> dict[str, tuple[float, float]]:
    """Open the run, then (``full``) draw its charts, filter its rows and come back to it from another page.

    Returns:
        Step → (wall seconds seen by the browser, CPU seconds of the server process ``pid``).
    """
    out: dict[str, tuple[float, float]] = {}

    page.goto(url)  # Streamlit's scripts into the cache, outside the timing
    # The first page's heading first: before its script starts there is no running indicator
    # either, and the imports of the app's first script run would fall into the timed open.
    expect(page.get_by_role("heading", name="Evaluate")).to_be_visible(timeout=TIMEOUT_MS)
    _idle(page)
    status = page.get_by_text("Completed: all")
    started, cpu = time.perf_counter(), cpu_seconds(pid)
    page.goto(f"{url}/history?run={run_id}")
    expect(status).to_be_visible(timeout=TIMEOUT_MS)
    out["open the run: status shown"] = time.perf_counter() - started, cpu_seconds(pid) - cpu
    expect(page.get_by_role("tab", name="Distributions")).to_be_visible(timeout=TIMEOUT_MS)
    _idle(page)
    out["open the run: idle"] = time.perf_counter() - started, cpu_seconds(pid) - cpu
    if not full:
        return out

    def charts() -> None:
        page.get_by_role("tab", name="Distributions").click()
        charts = page.locator(".stPlotlyChart")
        expect(charts.first).to_be_visible(timeout=TIMEOUT_MS)
        _idle(page)  # the tab's script run is over: every chart element is on the page
        drawn.append(charts.count())
        for i in range(drawn[-1]):  # each chart drawn (Plotly draws several .main-svg layers per chart)
            expect(charts.nth(i).locator(".main-svg").first).to_be_visible(timeout=TIMEOUT_MS)

    drawn: list[int] = []
    seconds = timed(pid, charts)
    out[f"draw the charts ({drawn[-1]})"] = seconds
    page.get_by_role("tab", name="Rows and drill-down").click()
    search = page.get_by_label("Search text")
    caption = page.get_by_text("rows (one per item and scorer)").first
    before = caption.inner_text()

    def search_rows() -> None:
        search.fill("omega")
        search.press("Enter")
        expect(caption).not_to_have_text(before, timeout=TIMEOUT_MS)  # the filtered count is on screen
        expect(caption).to_contain_text(f"of {2 * n_items} rows")
        _idle(page)

    out["apply a filter"] = timed(pid, search_rows)
    page.get_by_test_id("stSidebarNav").get_by_role("link", name="Evaluate", exact=True).click()
    expect(page.get_by_role("heading", name="Evaluate")).to_be_visible(timeout=TIMEOUT_MS)
    _idle(page)

    def back() -> None:
        page.get_by_test_id("stSidebarNav").get_by_role("link", name="History", exact=True).click()
        expect(status).to_be_visible(timeout=TIMEOUT_MS)
        expect(page.get_by_role("tab", name="Distributions")).to_be_visible(timeout=TIMEOUT_MS)
        _idle(page)

    out["come back from another page"] = timed(pid, back)
    return out


def step_line(what: str, measured: list[tuple[float, float]]) -> str:
    """One step's printed line: the median wall and server CPU seconds of its servers (the range of the walls in
    brackets), and its target with "met" or "NOT met" beside the number the target is about.

    The issue's targets: opening a run (and opening it with its charts) under :data:`OPEN_TARGET_S` seconds of
    wall time, as the user waits for it; every rerun with the run open (a tab, a filter, coming back) under
    :data:`RERUN_TARGET_S` second of the server's time.
    """
    walls = sorted(wall for wall, _ in measured)
    spread = f" ({walls[0]:.2f}–{walls[-1]:.2f})" if len(walls) > 1 else ""
    wall, cpu = median(walls), median(cpu for _, cpu in measured)
    wall_text, cpu_text = f"wall {wall:5.2f} s{spread}", f"server CPU {cpu:5.2f} s"
    if "open" in what:
        verdict = "met" if wall < OPEN_TARGET_S else "NOT met"
        return f"{wall_text} (target < {OPEN_TARGET_S:g} s: {verdict}); {cpu_text}"
    verdict = "met" if cpu < RERUN_TARGET_S else "NOT met"
    return f"{cpu_text} (target < {RERUN_TARGET_S:g} s of server time: {verdict}); {wall_text}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=10_000, help="items of the two-scorer run (default 10,000)")
    parser.add_argument("--big-rows", type=int, default=20_000, help="rows of the 20 kB run (default 20,000)")
    parser.add_argument("--chromium", default=os.environ.get("CHROMIUM_PATH") or shutil.which("chromium"))
    parser.add_argument(
        "--compare-only", action="store_true", help="History's open of the run, then Compare's steps; no 20 kB run"
    )
    parser.add_argument(
        "--repeat", type=int, default=3, help="servers started per run, each measured once; medians printed (default 3)"
    )
    args = parser.parse_args()
    if args.compare_only:
        args.big_rows = 0
    if not args.chromium:
        raise SystemExit("needs Debian's Chromium: apt-get install chromium, or --chromium PATH")
    print(f"load average (1, 5, 15 min): {', '.join(f'{x:.1f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs")
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        db = tmp / "bench.db"
        started = time.perf_counter()
        run_id, rerun_id, big_id = build_runs(db, args.items, args.big_rows)
        print(f"built the runs in {time.perf_counter() - started:.1f} s ({db.stat().st_size / 2**20:,.0f} MB database)")
        rows: list[tuple[str, str, str]] = []
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path=args.chromium, args=["--headless=new", "--no-sandbox", "--disable-gpu"]
            )
            try:
                flows = [(f"{2 * args.items:,} outcomes", run_id, not args.compare_only, True)]
                if big_id is not None:
                    flows.append((f"{args.big_rows:,} rows of 20 kB responses", big_id, False, False))
                for name, rid, full, compare in flows:
                    runs: dict[str, list[tuple[float, float]]] = {}
                    rss = 0.0
                    for _ in range(args.repeat):  # a new server each time: every open is a first, uncached one
                        with streamlit_server(db, tmp) as (url, pid):
                            page = browser.new_page(viewport={"width": 1400, "height": 1000})
                            page.set_default_timeout(TIMEOUT_MS)
                            times = measure_views(page, url, pid, rid, args.items, full=full)
                            if compare:
                                times |= measure_compare(page, url, pid, rerun_id)
                            if full:
                                times |= measure_review(page, url, pid, rid)
                            page.close()
                            rss = max(rss, peak_rss_mb(pid))
                        for what, seconds in times.items():
                            runs.setdefault(what, []).append(seconds)
                    charts = next((what for what in runs if what.startswith("draw the charts")), None)
                    if charts is not None:  # the "opening the run, with charts": both steps, server by server
                        runs["open the run with its charts (open, then charts)"] = [
                            (o_wall + c_wall, o_cpu + c_cpu)
                            for (o_wall, o_cpu), (c_wall, c_cpu) in zip(
                                runs["open the run: idle"], runs[charts], strict=True
                            )
                        ]
                    rows.extend((name, what, step_line(what, measured)) for what, measured in runs.items())
                    rss_verdict = "met" if rss < RSS_TARGET_MB else "NOT met"
                    rows.append(
                        (name, "server peak RSS", f"{rss:6.0f} MB (target < {RSS_TARGET_MB} MB: {rss_verdict})")
                    )
            finally:
                browser.close()
    width = max(len(r[0]) for r in rows), max(len(r[1]) for r in rows)
    for run, what, value in rows:
        print(f"{run.ljust(width[0])}  {what.ljust(width[1])}  {value}")


if __name__ == "__main__":
    main()
