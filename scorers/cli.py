"""Command line: score a dataset, list stored runs, export a run.

Usage::

    python -m scorers run DATASET --scorer prompt-alignment --scorer textual-difference \\
        [--mode user|system|both] [--scale N] [--model M] [--base-url URL] \\
        [--concurrency N] [--timeout S] [--item-timeout S] [--output results.csv] \\
        [--fail-under prompt-alignment=0.7 ...] [--fail-over toxicity=0.2 ...] [--junit FILE [--junit-items]] \\
        [--input-col C] [--output-col C] \\
        [--system-col C] [--ground-truth-col C] [--id-col C] [--group-col C ...] [--db PATH] [--yes]
    python -m scorers run --resume RUN_ID [--retry-failed] [--db PATH]
    python -m scorers runs [--db PATH]
    python -m scorers export RUN_ID --output FILE [--db PATH]
    python -m scorers report RUN_ID [--compare-with RUN_ID] --output report.html [--db PATH]
    python -m scorers gate --baseline B --candidate C [--min-effect [SCORER=]X ...] [--floor SCORER=X ...]
        [--max-unscored SHARE] [--markdown F] [--junit F [--junit-items]] [--json F] [--report F] [--db PATH]
    python -m scorers baseline set NAME RUN | show NAME | list [--db PATH]

``gate`` and ``baseline`` are in :mod:`scorers.cli_gate`: a regression gate for CI against
a named baseline, a run or a results file (exit 0 pass, 1 regression, 2 usage, 3 undecided).

``report`` writes a self-contained HTML report of a stored run (or of the run against
another run, ``--compare-with``): it opens offline and makes no request of its own.

``run`` loads the dataset (CSV, JSON Lines, JSON, Parquet, Excel; every record
skipped is listed with its line and reason), maps its columns to roles (the
flags, else detected from the header: the columns used are printed), prints
the estimate (judge calls, tokens, cost), scores every row with every scorer
while a progress bar runs on stderr (items done, those with failures, and apart from them
those not scored because an input is missing), and stores every outcome in the SQLite
store as it finishes (``--db``, else ``$SCORER_STUDIO_DB``, else the user data
directory). At the end it prints a summary per scorer and per dimension, the
tokens and cost actually spent and the run id, and writes ``--output``. Ctrl-C
stops the run after the judge calls in flight and prints how to resume it.

The judge is configured as in the library (:func:`scorers.core.judge.resolve_judge_settings`):
``--model`` / ``--base-url``, then ``.streamlit/secrets.toml``, then the
environment (``OPENAI_MODEL``, ``OPENAI_BASE_URL``, ``OPENAI_API_KEY``); a
resumed run keeps the model and endpoint it was started with unless
``--model`` / ``--base-url`` are given. The API key is never printed, stored or
exported. Valid judge replies are cached in the store, so an identical request
is not paid twice (``--no-cache`` turns that off). On a terminal, the CLI asks
before making paid judge calls (``--yes`` skips the question; without a
terminal it does not ask).

Exit codes:

* 0: every item was scored by every scorer and every threshold was met.
* 1: a threshold was not met (the mean of the scored items, on the scorer's
  scale, is below a ``--fail-under`` or above a ``--fail-over`` threshold beyond
  float noise of 1e-9, or no item was scored by that scorer); each scorer's mean
  and threshold are printed. Thresholds follow the scorer's direction:
  ``--fail-under`` for higher-is-better scorers, ``--fail-over`` for
  lower-is-better ones (toxicity, bias, hallucination); the other flag, or a
  threshold outside the scorer's range with its scale, is a usage error (2).
* 2: usage or input error, before any scoring: bad flags, an unreadable
  dataset, a missing column, an unknown run id, no API key and no base URL
  for an LLM judge, an output file that cannot be written, a cost cap that cannot
  hold the first judge call's reserved bound (no run is created, nothing is sent).
* 3: some outcomes are not scored (invalid input, judge errors, records skipped at load, ...); they are
  listed with their item and reason. Every threshold was met.
* 4: the run paused: the judge could not be used for the first item (wrong URL,
  key or model), K judge failures in a row said it is unreachable or K judge
  replies in a row were unusable (invalid output, refusals)
  (``--max-consecutive-failures``), its quota or daily limit is used up, or a
  budget cap was reached; the scores so far and the judge usage are printed, then the reason and the
  command to resume it.
* 130: interrupted (Ctrl-C, or the confirmation declined); the run id and the
  command to resume it are printed.
* 141: the reader of the output left before it was all written (``python -m
  scorers runs | head``); the rest is dropped quietly, as by a command ended
  by SIGPIPE.

Precedence when several apply: 2, then 130, then 4, then 1, then 3. A failed
threshold (1) wins over unscored items (3) because it is a verdict on the
scores; exit 3 means "the thresholds passed, but not everything was scored".
"""

from __future__ import annotations

import argparse
import gc
import math
import os
import signal
import sqlite3
import sys
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from scorers.catalogue.registry import SCORERS, create_scorer, resolve_options, unmapped_fields
from scorers.core.base import Scorer, decimal_text
from scorers.core.budget import (
    BudgetCaps,
    batch_api_caps_problem,
    cost_cap_refusal,
    cost_cap_warning,
    token_cap_refusal,
    token_cap_warning,
)
from scorers.core.errors import (
    InvalidInputError,
    JudgeConfigError,
    JudgeError,
    RunStatus,
    ScoreStatus,
    run_status_label,
)
from scorers.core.judge import (
    HOW_TO_CONFIGURE,
    OPENAI_BASE_URL,
    JudgeSettings,
    import_client_library,
    redact_key,
    resolve_judge_settings,
)
from scorers.core.pricing import BATCH_DISCOUNT, Price, price_for, run_cost, usd_text
from scorers.runs.batch_api import run_batch_api
from scorers.runs.judges import (
    RECORDED_SETTINGS,
    judge_record,
    judges_used,
    limits_config,
    run_prices,
    spend_by_judge,
)
from scorers.runs.runner import (
    DEFAULT_MAX_CONSECUTIVE_FAILURES,
    EvalItem,
    EvalRunResult,
    Summary,
    estimate_run,
    judge_model_of,
    load_run,
    recorded_scorer_options,
    run_evals,
)
from scorers.runs.store import HEARTBEAT_STALE_S, RunBusy, Store, copy_store, default_db

if TYPE_CHECKING:  # the dataset module is imported only by the commands that read a file
    from scorers.runs.datasets import LoadedDataset

EXIT_OK = 0
EXIT_THRESHOLD = 1
EXIT_USAGE = 2
EXIT_UNSCORED = 3
EXIT_PAUSED = 4
EXIT_INTERRUPTED = 130
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE, as a shell reports a command whose reader left (``... | head``)
PAUSED_STATUSES = frozenset(
    {
        RunStatus.JUDGE_UNREACHABLE.value,
        RunStatus.QUOTA_EXHAUSTED.value,
        RunStatus.JUDGE_REPLIES_UNUSABLE.value,
        RunStatus.BUDGET_REACHED.value,
    }
)
"""Run statuses the run paused at by itself (exit 4, resumable), not by Ctrl-C."""

SCORER_IDS = tuple(SCORERS)
LLM_SCORER_IDS = frozenset(sid for sid, spec in SCORERS.items() if spec.uses_judge)
COLUMN_FLAGS = {
    "input": "--input-col",
    "output": "--output-col",
    "system": "--system-col",
    "ground_truth": "--ground-truth-col",
    "id": "--id-col",
    "context": "--context-col",
    "tool_calls": "--tool-calls-col",
    "messages": "--messages-col",
}
DEFAULT_CONCURRENCY = 8
MAX_LISTED_FAILURES = 20

EPILOG = """\
exit codes:
  0    every item scored by every scorer, every threshold met
  1    a --fail-under/--fail-over threshold was not met (printed: scorer, mean
       vs threshold); --fail-under for higher-is-better scorers, --fail-over
       for lower-is-better ones (toxicity, bias, hallucination)
  2    usage or input error (bad flags, unreadable dataset, missing column,
       unknown run id, no API key and no base URL for an LLM judge, a --max-cost
       below the first judge call's reserved bound)
  3    some items could not be scored or loaded (listed with their row and reason)
  4    paused: the judge could not be used for the first item, or was unreachable
       K times in a row, or gave K unusable replies in a row (invalid output,
       refusals), or its quota or daily limit is used up (429
       insufficient_quota), or a budget cap was reached (reason and resume
       command printed)
  130  interrupted by Ctrl-C (the run id and the resume command are printed)
  precedence: 2 > 130 > 4 > 1 > 3 > 0

judge settings: --model/--base-url, else .streamlit/secrets.toml, else the
environment (OPENAI_MODEL, OPENAI_BASE_URL, OPENAI_API_KEY). The key is never
printed or stored. Results go to --db, else $SCORER_STUDIO_DB, else the user
data directory.

examples:
  python -m scorers run data.jsonl --scorer prompt-alignment --scorer textual-difference
  python -m scorers run data.csv --scorer prompt-alignment --mode user --scale 10 \\
      --fail-under prompt-alignment=7 --output results.csv --yes
  python -m scorers run --resume 3f2a9c0d1e4b
  python -m scorers runs
  python -m scorers export 3f2a9c0d1e4b --output results.parquet
  python -m scorers report 3f2a9c0d1e4b --compare-with 7c1d2e3f4a5b --output report.html
  python -m scorers gate --baseline main --candidate 3f2a9c0d1e4b --min-effect 0.02
  python -m scorers baseline set main 3f2a9c0d1e4b    (see `gate --help` for the gate's exit codes)
"""


class CLIError(Exception):
    """A usage or input error: printed as ``error: <message>``, exit code 2."""


@dataclass
class _Console:
    """stdout/stderr writers that never print the API key."""

    out: TextIO
    err: TextIO
    secret: str | None = None

    def _clean(self, text: str) -> str:
        return redact_key(text, self.secret)

    def print(self, text: str = "") -> None:
        self.out.write(self._clean(text) + "\n")
        self.out.flush()

    def note(self, text: str = "") -> None:
        self.err.write(self._clean(text) + "\n")
        self.err.flush()

    def raw_err(self, text: str) -> None:
        self.err.write(self._clean(text))
        self.err.flush()


def _start_up(settings: JudgeSettings | None) -> None:
    """A run's start-up begins: in the ``python -m scorers`` process the collector is off until
    :func:`freeze_start_up`, and the judge's client library is imported now when a scorer uses one."""
    if gc.get_freeze_count():
        gc.disable()
    if settings is not None:
        import_client_library()


def freeze_start_up() -> None:
    """In the ``python -m scorers`` process, exclude every object alive now from later garbage
    collections (:func:`gc.freeze`), as it did after its imports, and turn the collector back on:
    what a command built before its main work (libraries imported on first use, the dataset, the
    store) lives until the process exits, so collections during a long run no longer walk it again
    and again; the collector stays on for what the run makes. Nothing happens in a process that
    froze nothing (``main`` called in-process, by tests or another program).
    """
    if gc.get_freeze_count():
        gc.freeze()
        gc.enable()


# ---- argument parsing ---------------------------------------------------------------------------


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {value}")
    return value


def number_type(accepts: Callable[[float], bool], expected: str) -> Callable[[str], float]:
    """An argparse ``type`` for a finite number that ``accepts`` takes; otherwise "expected EXPECTED, got TEXT"."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not (math.isfinite(value) and accepts(value)):
            raise argparse.ArgumentTypeError(f"expected {expected}, got {text!r}")
        return value

    return parse


_positive_float = number_type(lambda value: value > 0, "a finite number > 0")

NO_CAP = "none"
"""A budget flag's value that removes the cap (on a resume: the one the run recorded)."""


def _cap(parse: Callable[[str], Any]) -> Callable[[str], Any]:
    """An argparse ``type`` for a budget cap: what ``parse`` accepts, or ``none`` (:data:`NO_CAP`) for no cap."""

    def cap(text: str) -> Any:
        if text.strip().lower() == NO_CAP:
            return NO_CAP
        try:
            return parse(text)
        except argparse.ArgumentTypeError as exc:
            raise argparse.ArgumentTypeError(f"{exc} (or none, for no cap)") from None

    return cap


def _price(text: str) -> Price:
    parts = text.split(",")
    try:
        values = [float(p) for p in parts]
        if len(values) != 2 or not all(math.isfinite(v) for v in values):
            raise ValueError
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected IN,OUT: USD per million input and output tokens, each >= 0, such as 0.15,0.60; got {text!r}"
        ) from None
    negative = [f"{side} {v:g}" for side, v in zip(("input", "output"), values, strict=True) if v < 0]
    if negative:
        raise argparse.ArgumentTypeError(
            f"a price per million tokens cannot be negative ({', '.join(negative)} in {text!r}); "
            "0 is a free model, e.g. --price 0,0"
        )
    return Price(*values)


def _price_values_attached(argv: list[str]) -> list[str]:
    """``--price -1,0`` as ``--price=-1,0``: argparse takes a value starting with "-" (other than a plain number) for
    an option, and would only say that --price expected one argument."""
    out: list[str] = []
    for arg in argv:
        if out and out[-1] == "--price" and arg.startswith("-"):
            out[-1] = f"--price={arg}"
        else:
            out.append(arg)
    return out


def _threshold(text: str) -> tuple[str, float]:
    name, sep, value = text.partition("=")
    if not sep or not name.strip():
        raise argparse.ArgumentTypeError(f"expected SCORER=THRESHOLD such as prompt-alignment=0.7, got {text!r}")
    try:
        number = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"the threshold of {name.strip()!r} is not a number: {value!r}") from None
    if not math.isfinite(number):
        raise argparse.ArgumentTypeError(f"the threshold of {name.strip()!r} must be finite, got {value!r}")
    return name.strip(), number


def build_parser() -> argparse.ArgumentParser:
    """The ``python -m scorers`` argument parser (subcommands ``run``, ``runs``, ``export``)."""
    parser = argparse.ArgumentParser(
        prog="python -m scorers",
        description="Scorer Studio: score LLM responses in a dataset, list stored runs, export results.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="{run,runs,export,report,gate,baseline,db}")

    run = commands.add_parser(
        "run",
        help="score a dataset (or resume a stored run)",
        description=(
            "Score every row of DATASET with every --scorer. Results are stored as they\n"
            "finish, so a stopped run can be continued with --resume RUN_ID."
        ),
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    run.add_argument(
        "dataset",
        nargs="?",
        metavar="DATASET",
        help="the dataset file: .csv/.tsv, .jsonl, .json, .parquet or .xlsx (omit with --resume)",
    )
    scoring = run.add_argument_group("scorers")
    scoring.add_argument(
        "--scorer",
        action="append",
        choices=SCORER_IDS,
        dest="scorers",
        metavar="ID",
        help=f"a scorer to run; repeat for several. One of: {', '.join(SCORER_IDS)}",
    )
    scoring.add_argument(
        "--mode",
        choices=("user", "system", "both"),
        default=None,
        help="prompt-alignment: judge the response against the user prompt, the system "
        "messages, or both (0.7·user + 0.3·system; default both, user mode for rows "
        "without a system message)",
    )
    scoring.add_argument(
        "--target",
        choices=("auto", "ground_truth", "input"),
        default=None,
        help="textual-difference, content-similarity: compare the response with the ground truth or the "
        "input (default auto: the ground truth when a column is mapped to it, else the input); a row whose "
        "target is blank is not scored (missing_input)",
    )
    scoring.add_argument(
        "--ignore-case", action="store_true", default=None, help="textual-difference: compare case-folded texts"
    )
    scoring.add_argument(
        "--collapse-whitespace",
        action="store_true",
        default=None,
        help="textual-difference: runs of whitespace count as one space (or one line break)",
    )
    scoring.add_argument(
        "--keep-newlines",
        action="store_false",
        dest="normalize_newlines",
        default=None,
        help="textual-difference: do not turn CRLF and CR into LF before comparing (they are by default)",
    )
    scoring.add_argument(
        "--scale",
        type=_positive_float,
        default=None,
        metavar="N",
        help="scorers with a scale option (prompt-alignment, textual-difference) score in [0, N] instead of [0, 1]",
    )
    scoring.add_argument(
        "--fail-under",
        action="append",
        type=_threshold,
        default=[],
        metavar="SCORER=T",
        help="exit 1 if the mean score of SCORER's scored items is below T (on the scorer's "
        "scale, within its range); for higher-is-better scorers; repeatable, e.g. --fail-under prompt-alignment=0.7",
    )
    scoring.add_argument(
        "--fail-over",
        action="append",
        type=_threshold,
        default=[],
        metavar="SCORER=T",
        help="exit 1 if the mean score of SCORER's scored items is above T; for lower-is-better "
        "scorers (toxicity, bias, hallucination); repeatable, e.g. --fail-over toxicity=0.2",
    )

    judge = run.add_argument_group("judge (LLM scorers)")
    judge.add_argument(
        "--model", help="judge model, e.g. gpt-4o-mini or openai/gpt-4o (default $OPENAI_MODEL or openai/gpt-4o-mini)"
    )
    judge.add_argument(
        "--base-url",
        metavar="URL",
        help="an OpenAI-compatible endpoint ending in /v1, e.g. http://localhost:11434/v1 "
        "(default $OPENAI_BASE_URL or OpenAI's)",
    )
    judge.add_argument(
        "--timeout",
        type=_positive_float,
        default=None,
        metavar="S",
        help="seconds to wait for one judge HTTP response (default 60)",
    )
    judge.add_argument(
        "--no-cache", action="store_true", help="do not reuse judge replies cached in the store for identical requests"
    )
    judge.add_argument(
        "--judge-max-tokens",
        type=_positive_int,
        default=None,
        metavar="N",
        help="cap on each judge reply in tokens (default: the server's); also the strict bound the "
        "token and cost caps use for a reply (else 4,096 tokens are assumed)",
    )
    judge.add_argument(
        "--judge",
        choices=("run", "current"),
        default="run",
        help="with --resume/--retry-failed: 'run' (default) keeps the run's judge model, endpoint, "
        "temperature and seed (--model/--base-url still override them); 'current' uses the judge of "
        "the flags, secrets and environment, as a new run would",
    )
    judge.add_argument(
        "--price",
        type=_price,
        default=None,
        metavar="IN,OUT",
        help="the judge's price in USD per million input and output tokens, e.g. 0.15,0.60; overrides "
        "the list price (genai-prices, offline); needed for --max-cost with a model it does not know",
    )
    budget = run.add_argument_group(
        "budget",
        "Caps for the whole run (a resumed run counts what it spent before). Before each judge call the\n"
        "run reserves its upper bound (the prompt at one token per byte, the reply at --judge-max-tokens,\n"
        "4,096 without it) and sends it only while the spend so far, what the calls in flight hold and\n"
        "that bound stay within every cap (one that passes the token or cost cap only for what the calls\n"
        "in flight hold waits for them). Items reserve in item order, so a cap admits the first items,\n"
        "the same ones at any --concurrency and on every run (a re-ask or a second reason call is\n"
        "reserved when made, so with those the last item admitted can vary).\n"
        "Otherwise the call is not sent: the run stops at the cap, never past it, with status\n"
        "budget_reached (exit 4), and can be resumed with a higher cap. A --max-cost or --max-total-tokens\n"
        "that cannot hold the first call's bound is refused before anything is sent (exit 2); one that\n"
        "admits fewer calls than the estimate is warned of. A resumed run keeps its caps unless given;\n"
        "none removes one (e.g. --max-cost none).",
    )
    budget.add_argument(
        "--max-judge-calls",
        type=_cap(_positive_int),
        default=None,
        metavar="N",
        help="HTTP requests to the judge: a failed request the openai client retries itself (5xx, 429, timeout, "
        f"connection error; up to the judge's max_retries times, {JudgeSettings.max_retries} by default, a resumed "
        "run's judge's as recorded) counts once a try",
    )
    budget.add_argument(
        "--max-total-tokens", type=_cap(_positive_int), default=None, metavar="N", help="prompt + completion tokens"
    )
    budget.add_argument(
        "--max-cost",
        type=_cap(_positive_float),
        default=None,
        metavar="USD",
        help="judge cost in USD at the model's list price or --price",
    )
    judge.add_argument(
        "--max-consecutive-failures",
        type=_positive_int,
        default=DEFAULT_MAX_CONSECUTIVE_FAILURES,
        metavar="K",
        help="pause the run (exit 4, resumable) after K judge failures in a row that say the judge is "
        f"unreachable: connection, timeout, auth, 5xx (default {DEFAULT_MAX_CONSECUTIVE_FAILURES}), or after K "
        "judge replies in a row that are unusable: invalid output after the re-ask, or refusals (those are "
        "recorded as failed). The first item is always scored alone first: a wrong URL, key or model stops the "
        "run there. Until the judge's first usable reply, and after an unusable one, the judge scores one item at "
        "a time: a judge whose replies are all unusable costs K items (2K calls with the re-ask; K with "
        "refusals) before the pause, whatever the concurrency",
    )

    batch = run.add_argument_group("batch")
    batch.add_argument(
        "--concurrency",
        type=_positive_int,
        default=None,
        metavar="N",
        help=f"items scored at once (default {DEFAULT_CONCURRENCY})",
    )
    batch.add_argument(
        "--item-timeout",
        type=_positive_float,
        default=None,
        metavar="S",
        help="seconds one item may take for all its scorers, not counting its waits for other items "
        "(a budget cap's turn, calls in flight); later, it is recorded as an API error and sends no further "
        "judge call, and what a judge call it stopped waiting for spent when answered is counted "
        "(default: no limit beyond --timeout)",
    )
    batch.add_argument(
        "--output",
        "-o",
        metavar="FILE",
        help="also write the results to FILE; the format follows the extension: .csv "
        "(spreadsheet-safe), .jsonl (one object per item × scorer), .json (the seeds' "
        "runEvals shape), .parquet",
    )
    batch.add_argument(
        "--junit",
        metavar="FILE",
        help="also write JUnit XML for CI: one test case per scorer (a failure when its --fail-under / "
        "--fail-over threshold is not met, an error when items were not scored)",
    )
    batch.add_argument("--junit-items", action="store_true", help="with --junit: also one test case per item × scorer")
    batch.add_argument(
        "--resume",
        metavar="RUN_ID",
        help="continue a stopped run: only the item × scorer outcomes not stored yet are scored "
        "(the run keeps its dataset, scorers, options and judge model and endpoint; "
        "--model/--base-url override the judge)",
    )
    batch.add_argument(
        "--retry-failed", action="store_true", help="with --resume: also score again the outcomes that were not scored"
    )
    batch.add_argument(
        "--batch-api",
        action="store_true",
        help="send the judge calls through the provider's Batch API (/v1/batches) instead of live calls: "
        "half the price and a separate rate limit, answers within 24 h. The batch ids are stored: stop "
        "with Ctrl-C and --resume RUN_ID later to collect the answers (a resumed run keeps this mode)",
    )
    batch.add_argument(
        "--live-reasks",
        action="store_true",
        help="with --batch-api: re-ask invalid judge output with a live call at once instead of in a follow-up batch",
    )
    batch.add_argument(
        "--poll-interval",
        type=_positive_float,
        default=30.0,
        metavar="S",
        help="with --batch-api: seconds between two looks at the open batches (default 30)",
    )
    batch.add_argument(
        "--db",
        metavar="PATH",
        help="the store: a SQLite file or a postgresql:// URL (default $SCORER_STUDIO_DB or the user data directory)",
    )
    batch.add_argument(
        "--yes",
        "-y",
        action="store_true",
        help="do not ask for confirmation before paid judge calls (only asked on a terminal)",
    )

    columns = run.add_argument_group(
        "columns",
        "Which column plays which role. Without a flag, the role is detected from the\n"
        "header (prompt/input/question... for input, response/output/answer... for\n"
        "output) and the columns used are printed. An empty value (--system-col '')\n"
        "leaves a role unmapped.",
    )
    columns.add_argument("--input-col", metavar="COL", help="the user prompt")
    columns.add_argument("--output-col", metavar="COL", help="the response to evaluate")
    columns.add_argument("--system-col", metavar="COL", help="the system message (optional)")
    columns.add_argument(
        "--ground-truth-col", metavar="COL", help="the reference answer (optional; textual-difference compares with it)"
    )
    columns.add_argument("--id-col", metavar="COL", help="a unique item id (optional; default the row's line)")
    columns.add_argument(
        "--context-col",
        metavar="COL",
        help="context passages (optional): a JSON list of strings or one passage, for faithfulness, "
        "hallucination, context precision/relevance, noise sensitivity",
    )
    columns.add_argument(
        "--tool-calls-col",
        metavar="COL",
        help="the tool calls the response made (optional): a JSON list of names or {name, arguments}, "
        "for the tool-call accuracy scorers",
    )
    columns.add_argument(
        "--messages-col",
        metavar="COL",
        help="a conversation in OpenAI chat format (a JSON list of role/content messages); unless --output-col is "
        "given, its final message is the response when it is the assistant's (else the row is not scored: "
        "missing_input), the earlier turns are context for the judge",
    )
    columns.add_argument(
        "--no-guess",
        action="store_true",
        help="do not guess roles from column names: only the roles given by flags are mapped",
    )
    columns.add_argument(
        "--group-col",
        action="append",
        default=[],
        metavar="COL",
        help="a column to group results by (e.g. model or prompt variant); repeatable",
    )

    runs = commands.add_parser(
        "runs",
        help="list the stored runs",
        description="List the stored runs, newest first: id, date, status, dataset,\n"
        "judge model, and per scorer the mean and counts.",
    )
    runs.add_argument(
        "--db",
        metavar="PATH",
        help="the store: a SQLite file or a postgresql:// URL (default $SCORER_STUDIO_DB or the user data directory)",
    )
    runs.add_argument("--limit", type=_positive_int, default=None, metavar="N", help="show the N newest runs")

    export = commands.add_parser(
        "export",
        help="write a stored run's results to a file",
        description="Write a stored run's results to FILE; the format follows the\n"
        "extension (.csv, .jsonl, .json, .parquet).",
    )
    export.add_argument("run_id", metavar="RUN_ID", help="the run's id (see `python -m scorers runs`)")
    export.add_argument("--output", "-o", required=True, metavar="FILE", help="the file to write")
    export.add_argument(
        "--db",
        metavar="PATH",
        help="the store: a SQLite file or a postgresql:// URL (default $SCORER_STUDIO_DB or the user data directory)",
    )

    db = commands.add_parser("db", help="manage the store: copy it to another database")
    db_commands = db.add_subparsers(dest="db_command", required=True, metavar="{copy}")
    copy = db_commands.add_parser(
        "copy",
        help="copy every run, label, saved judge and cached reply into an empty store, checking counts",
        description="Copy everything in SRC (runs, items, results, labels with their history, saved\n"
        "judges, the judge cache, Batch API jobs) into the empty store DST, in one transaction,\n"
        "and check that every table has as many rows in DST as in SRC. Either may be a SQLite\n"
        "file or a postgresql://USER:PASSWORD@HOST:PORT/DATABASE URL (a new database is\n"
        "migrated first). Stop the dashboards and runs that write to SRC while it copies.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    copy.add_argument("source", metavar="SRC", help="the store to copy (a SQLite file or a URL)")
    copy.add_argument("target", metavar="DST", help="the empty store to fill (a new SQLite file or a URL)")

    report = commands.add_parser(
        "report",
        help="write a self-contained HTML report of a stored run",
        description="Write a self-contained HTML report of a stored run: setup, leaderboard with\n"
        "confidence intervals, charts and sample rows. With --compare-with, the run is\n"
        "compared item by item with another run (differences are RUN_ID − the other).\n"
        "The file opens offline and makes no request of its own.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    report.add_argument("run_id", metavar="RUN_ID", help="the run's id (see `python -m scorers runs`)")
    report.add_argument(
        "--compare-with",
        metavar="RUN_ID",
        dest="compare_with",
        help="a baseline run to compare with, matched by item id",
    )
    report.add_argument("--output", "-o", required=True, metavar="FILE", help="the HTML file to write")
    report.add_argument(
        "--rows", type=_positive_int, default=10, metavar="N", help="sample rows per scorer (default 10)"
    )
    report.add_argument(
        "--db",
        metavar="PATH",
        help="the store: a SQLite file or a postgresql:// URL (default $SCORER_STUDIO_DB or the user data directory)",
    )
    from scorers.cli_gate import add_parsers  # it imports this module's helpers

    add_parsers(commands)
    return parser


# ---- small helpers ------------------------------------------------------------------------------


def _fmt(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else decimal_text(value, digits)


def _table(headers: Sequence[str], rows: Sequence[Sequence[str]], right: Sequence[bool]) -> list[str]:
    widths = [max(len(str(h)), *(len(str(r[i])) for r in rows)) for i, h in enumerate(headers)]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(
            str(c).rjust(w) if r else str(c).ljust(w) for c, w, r in zip(cells, widths, right, strict=True)
        )

    return [line(headers).rstrip(), *(line(r).rstrip() for r in rows)]


def _duration(seconds: float) -> str:
    seconds = max(0, int(round(seconds)))
    hours, rest = divmod(seconds, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}" if hours else f"{rest // 60}:{rest % 60:02d}"


def _check_output_path(path: str) -> str:
    try:
        from scorers.runs.export import format_for_path

        fmt = format_for_path(path)
    except ValueError as exc:
        raise CLIError(str(exc)) from None
    parent = Path(path).expanduser().resolve().parent
    if not parent.is_dir():
        raise CLIError(f"{path}: the folder {parent} does not exist; create it or choose another --output")
    return fmt


def _open_store(db: str | None, *, must_exist: bool) -> Store:
    target = db or default_db()
    if "://" not in target:
        target = str(Path(target).expanduser())
        if must_exist and not Path(target).exists():
            raise CLIError(
                f"no Scorer Studio database at {target}: run `python -m scorers run ...` first, or pass --db"
            )
    try:
        return Store(target)
    except (sqlite3.DatabaseError, OSError, ValueError) as exc:
        raise CLIError(f"cannot open the store: {exc}") from None


# ---- progress -----------------------------------------------------------------------------------


def item_progress(statuses: Iterable[ScoreStatus]) -> str | None:
    """How the progress bar counts an item with outcomes of ``statuses``: ``"failed"`` when one is not scored for
    another reason than a missing input (a judge failure, an invalid input), else ``"missing"`` when one is not
    scored because an input is missing (``missing_input``: nothing failed, it was not scored), else None."""
    kinds = {s for s in statuses if s is not ScoreStatus.SCORED}
    if kinds - {ScoreStatus.MISSING_INPUT}:
        return "failed"
    return "missing" if kinds else None


class Progress:
    """A progress bar on a stream: ``\\r`` updates on a terminal, occasional lines otherwise.

    Args:
        stream: where to write (stderr).
        total: items in the run.
        done: items already finished before this session (resume).
        failed: of those, items with a failed outcome (:func:`item_progress`).
        missing: of those, items not scored only because an input is missing (:func:`item_progress`).
        interval: on a terminal, seconds between redraws; otherwise seconds
            between lines (a line is also written at every 10% step).
    """

    BAR_WIDTH = 24

    def __init__(
        self,
        stream: TextIO,
        total: int,
        *,
        done: int = 0,
        failed: int = 0,
        missing: int = 0,
        interval: float | None = None,
    ):
        self.stream = stream
        self.total = total
        self.done = done
        self.failed = failed
        self.missing = missing
        self.tty = bool(getattr(stream, "isatty", lambda: False)())
        self.interval = interval if interval is not None else (0.1 if self.tty else 10.0)
        self._start_done = done
        self._start = time.monotonic()
        self._last_draw = 0.0
        self._last_step = self._step()
        self._width = 0
        self._lock = threading.Lock()

    def _step(self) -> int:
        return (10 * self.done) // self.total if self.total else 10

    def text(self) -> str:
        """The current state: bar, done/total, failed, not scored for a missing input (when any), elapsed and ETA."""
        filled = self.BAR_WIDTH * self.done // self.total if self.total else self.BAR_WIDTH
        bar = "#" * filled + "-" * (self.BAR_WIDTH - filled)
        elapsed = time.monotonic() - self._start
        session = self.done - self._start_done
        remaining = self.total - self.done
        if remaining == 0:
            eta = "0:00"
        elif session > 0:
            eta = _duration(elapsed / session * remaining)
        else:
            eta = "?"
        return (
            f"[{bar}] {self.done}/{self.total} items, {self.failed} with failures, "
            + (f"{self.missing} not scored (missing input), " if self.missing else "")
            + f"{_duration(elapsed)} elapsed, ETA {eta}"
        )

    def start(self) -> None:
        with self._lock:
            self._draw(force=True)

    def item_done(self, kind: str | None) -> None:
        """Count one finished item; ``kind`` as :func:`item_progress` gives it."""
        with self._lock:
            self.done += 1
            self.failed += kind == "failed"
            self.missing += kind == "missing"
            self._draw(force=False)

    def _draw(self, *, force: bool) -> None:
        now = time.monotonic()
        if self.tty:
            if force or self.done == self.total or now - self._last_draw >= self.interval:
                text = self.text()
                self.stream.write("\r" + text.ljust(self._width))
                self.stream.flush()
                self._width = len(text)
                self._last_draw = now
            return
        step = self._step()
        if force or step > self._last_step or now - self._last_draw >= self.interval:
            self.stream.write(self.text() + "\n")
            self.stream.flush()
            self._last_draw = now
            self._last_step = step

    def close(self) -> None:
        """Draw the final state and end the line."""
        with self._lock:
            if self.tty:
                self._draw(force=True)
                self.stream.write("\n")
                self.stream.flush()


# ---- scorers and judge --------------------------------------------------------------------------


def _scorer_options(
    scorer_ids: Sequence[str], scale: float | None, mode: str | None, **given: Any
) -> dict[str, dict[str, Any]]:
    """Each scorer's options from the catalogue defaults, with ``--scale``, ``--mode`` and the other
    option flags (``given``: option name → value, None when not given) where it has them."""
    given = {"scale": scale, "evaluation_mode": mode, **given}
    options: dict[str, dict[str, Any]] = {}
    for sid in scorer_ids:
        spec = SCORERS.get(sid)
        specs = spec.options if spec is not None else ()
        options[sid] = {o.name: given[o.name] if given.get(o.name) is not None else o.default for o in specs}
    return options


def _make_scorers(
    options: Mapping[str, Mapping[str, Any]], settings: JudgeSettings | None, cache: Store | None
) -> list[Scorer]:
    try:
        return [create_scorer(sid, dict(opts), settings=settings, cache=cache) for sid, opts in options.items()]
    except InvalidInputError as exc:
        raise CLIError(str(exc)) from None


def _judge_settings(
    args: argparse.Namespace, scorer_ids: Sequence[str], stored: Mapping[str, Any] | None = None
) -> JudgeSettings | None:
    """Resolved judge settings, or None when no scorer needs a judge; exit 2 without a key or base URL."""
    llm = [sid for sid in scorer_ids if sid in LLM_SCORER_IDS]
    if not llm:
        return None
    stored = (stored or {}) if getattr(args, "judge", "run") == "run" else {}
    stored_url = stored.get("baseUrl")
    # Every setting the run's judge recorded (scorers.runs.judges.judge_record); a flag given wins.
    parameters = {field: stored[key] for key, field in RECORDED_SETTINGS.items() if key in stored}
    if args.timeout is not None:
        parameters["timeout"] = args.timeout
    if args.judge_max_tokens is not None:
        parameters["max_tokens"] = args.judge_max_tokens
    try:
        settings = resolve_judge_settings(
            model=args.model or stored.get("model"),
            base_url=args.base_url or (stored_url if stored_url and stored_url != OPENAI_BASE_URL else None),
            **parameters,
        )
    except JudgeConfigError as exc:
        raise CLIError(str(exc)) from None
    if not settings.api_key and not settings.base_url:
        raise CLIError(
            f"{' and '.join(llm)} need{'s' if len(llm) == 1 else ''} an LLM judge, but no API key and no base URL "
            f"are set. {HOW_TO_CONFIGURE} On the command line: OPENAI_API_KEY=... python -m scorers run ..., "
            "or --base-url URL --model NAME for a local server."
        )
    return settings


# ---- dataset → items ----------------------------------------------------------------------------


def _mapping(args: argparse.Namespace, dataset: LoadedDataset) -> tuple[dict[str, str | None], dict[str, str]]:
    """Role → column (flags first, the rest detected) and role → where it came from."""
    flagged = {role: getattr(args, flag[2:].replace("-", "_")) for role, flag in COLUMN_FLAGS.items()}
    taken = {c for c in flagged.values() if c}
    from scorers.runs.datasets import guess_columns

    guessed = {} if args.no_guess else guess_columns([c for c in dataset.columns if c not in taken])
    mapping: dict[str, str | None] = {}
    source: dict[str, str] = {}
    for role, value in flagged.items():
        if value is not None:
            mapping[role], source[role] = (value or None), COLUMN_FLAGS[role]
        else:
            mapping[role], source[role] = guessed.get(role), "detected"
    return mapping, source


def _describe_mapping(mapping: Mapping[str, str | None], source: Mapping[str, str]) -> str:
    parts = []
    for role in COLUMN_FLAGS:
        column = mapping.get(role)
        shown = repr(column) if column else ("none (row labels)" if role == "id" else "none")
        parts.append(f"{role} = {shown} ({source[role]})" if column else f"{role} = {shown}")
    guessed = any(source.get(r) == "detected" and mapping.get(r) for r in COLUMN_FLAGS)
    note = " (roles marked detected were guessed from the column names; --no-guess turns that off)" if guessed else ""
    return "Columns: " + ", ".join(parts) + note


def _items(dataset: LoadedDataset, mapping: Mapping[str, str | None], groups: Sequence[str]) -> list[EvalItem]:
    from scorers.runs.datasets import iter_runs, require_columns, unmapped_columns

    require_columns(dataset, {f"group ({column})": column for column in groups})
    others = unmapped_columns(dataset, mapping, exclude=groups)
    group_values: list[dict[str, Any]] = [{} for _ in others]
    if groups:
        from scorers.runs.export import json_safe  # (it imports pandas)

        columns = {column: dataset.column_values(column) for column in groups}
        group_values = [{c: json_safe(values[i]) for c, values in columns.items()} for i in range(len(others))]
    return [
        EvalItem(item_id, payload, group_values[index], others[index])
        for index, item_id, payload in iter_runs(dataset, mapping)
    ]


def _report_load(console: _Console, dataset: LoadedDataset) -> None:
    console.note(f"Loaded {len(dataset.source_rows)} row(s) from {dataset.source_name} ({dataset.format}).")
    if dataset.skipped:
        console.note(f"Skipped {len(dataset.skipped)} record(s) that could not be loaded:")
        for skipped in dataset.skipped:
            console.note(f"  {skipped}")
    for warning in dataset.warnings:
        console.note(f"Note: {warning}")


# ---- estimate and summary -----------------------------------------------------------------------


def _print_estimate(
    console: _Console,
    items_per_scorer: Mapping[str, Sequence[EvalItem]],
    scorers: Sequence[Scorer],
    settings: JudgeSettings | None,
    *,
    batch_api: bool = False,
    price: Price | None = None,
    price_source: str = "the price set with --price",
    max_cost: float | None = None,
    spent: float = 0.0,
    max_tokens: int | None = None,
    spent_tokens: int = 0,
) -> int:
    """Print the estimate of the judge calls, tokens and cost; ``price`` (the judge's) is ``price_source`` in words;
    a warning when the cost cap ``max_cost`` (USD), less what a resumed run ``spent`` before, or the token cap
    ``max_tokens``, less the ``spent_tokens`` before, admits fewer calls.

    Raises:
        CLIError: either cap cannot hold the first judge call (:func:`scorers.core.budget.cost_cap_refusal`,
            :func:`scorers.core.budget.token_cap_refusal`).
    """
    calls = prompt = completion = too_long = cached = 0
    cost: float | None = 0.0
    bounds = []  # what the budget holds before each judge scorer's first call, USD
    token_bounds = []  # the same in tokens
    for scorer in scorers:  # a scorer with the judge cache (no --no-cache) has every item looked up in it
        estimate = estimate_run(
            items_per_scorer[scorer.id], [scorer], batch_api=batch_api, probe_cache=True, price=price
        )
        calls += estimate.judge_calls
        too_long += estimate.too_long
        cached += estimate.cached
        prompt += estimate.prompt_tokens
        completion += estimate.completion_tokens
        cost = None if cost is None or estimate.cost_usd is None else cost + estimate.cost_usd
        if estimate.call_bound_usd is not None:
            bounds.append(estimate.call_bound_usd)
        if estimate.call_bound_tokens is not None:
            token_bounds.append(estimate.call_bound_tokens)
    if too_long:
        console.note(
            f"{too_long} item × scorer outcome(s) have a judge prompt longer than the model's context window: "
            "they will not be sent (exceeds_context, not scored) and are not in the estimate."
        )
    if cached:
        console.note(f"{cached} item × scorer outcome(s) are answered from the judge cache: free, not in the estimate.")
    if calls == 0 or settings is None:
        console.note(f"Estimate: no judge calls{' (code-based scoring only)' if settings is None else ''}, cost $0.00.")
        return calls
    which = price_source if price is not None else f"{settings.model_name}'s list price"
    if cost is None or price_for(settings.model_name, price) is None:
        cost_text = f"cost unknown (no list price for model {settings.model_name!r}; set one with --price)"
    elif batch_api:
        cost_text = (
            f"about {usd_text(cost)} at the Batch API's price ({BATCH_DISCOUNT:.0%} off {which}, "
            f"{usd_text(cost / (1 - BATCH_DISCOUNT))})"
        )
    else:
        cost_text = f"about {usd_text(cost)} at {which}"
    console.note(
        f"Estimate: {calls} judge calls to {settings.model_name} at {settings.endpoint}, "
        f"~{prompt:,} prompt + ~{completion:,} completion tokens, {cost_text}."
    )
    bound, token_bound = min(bounds, default=None), min(token_bounds, default=None)
    tokens_field = "--judge-max-tokens N"
    if refusal := cost_cap_refusal(max_cost, bound, spent, cap_field="--max-cost USD", tokens_field=tokens_field):
        raise CLIError(f"{refusal} Nothing was sent.")
    if refusal := token_cap_refusal(
        max_tokens, token_bound, spent_tokens, cap_field="--max-total-tokens N", tokens_field=tokens_field
    ):
        raise CLIError(f"{refusal} Nothing was sent.")
    if warning := cost_cap_warning(max_cost, cost, calls, spent, bound):
        console.note(f"warning: {warning}")
    if warning := token_cap_warning(max_tokens, prompt + completion, calls, spent_tokens, token_bound):
        console.note(f"warning: {warning}")
    return calls


def _summary_rows(name: str, summary: Summary, *, failures: bool = True) -> list[str]:
    row = [name, str(summary.n_scored)]
    if failures:
        row.append(str(summary.n_failed))
    return row + [_fmt(summary.mean), _fmt(summary.median), _fmt(summary.std), _fmt(summary.min), _fmt(summary.max)]


def _print_summary(
    console: _Console,
    result: EvalRunResult,
    items: Sequence[EvalItem],
    scorers: Sequence[Scorer],
    labels: Mapping[int, str],
    output: str | None = None,
    export_hint: str = "",
) -> None:
    """The run's scores, dimensions and the outcomes not scored (the first :data:`MAX_LISTED_FAILURES`; the rest
    are where the user can read them: ``output`` (the ``--output`` file) when given, and the store, whose
    ``export_hint`` command writes them to a file)."""
    console.print("")
    console.print(f"Scores ({result.n_items} items; statistics over scored items only, failures counted apart):")
    rows = [_summary_rows(sid, s) for sid, s in result.scores().items()]
    for line in _table(
        ["scorer", "n scored", "n not scored", "mean", "median", "std", "min", "max"],
        rows,
        [False, True, True, True, True, True, True, True],
    ):
        console.print("  " + line)
    dims = result.dimensions(scorers)
    dim_rows = [
        [sid, *_summary_rows(name, s, failures=False)] for sid, by_dim in dims.items() for name, s in by_dim.items()
    ]
    if dim_rows:
        console.print("")
        console.print("Dimensions (0..1, scored items):")
        for line in _table(
            ["scorer", "dimension", "n", "mean", "median", "std", "min", "max"],
            dim_rows,
            [False, False, True, True, True, True, True, True],
        ):
            console.print("  " + line)
    group_names = list(dict.fromkeys(k for item in items for k in item.groups))
    if group_names:
        console.print("")
        console.print("By group (scored items):")
        by_group: dict[tuple[str, str, str], list[Any]] = {}
        for o in result.outcomes:
            for name in group_names:
                key = (o.scorer_id, name, str(items[o.item_index].groups.get(name)))
                by_group.setdefault(key, []).append(o)
        group_rows = []
        for (sid, name, value), outcomes in by_group.items():
            scored = [o.score for o in outcomes if o.status is ScoreStatus.SCORED]
            s = Summary.of(scored, n_failed=len(outcomes) - len(scored))
            group_rows.append([sid, f"{name}={value}", str(s.n_scored), str(s.n_failed), _fmt(s.mean)])
        for line in _table(
            ["scorer", "group", "n scored", "n not scored", "mean"], group_rows, [False, False, True, True, True]
        ):
            console.print("  " + line)
    failed = [o for o in result.outcomes if o.status is not ScoreStatus.SCORED]
    if failed:
        console.print("")
        console.print(f"Not scored ({len(failed)} outcome(s)):")
        for o in failed[:MAX_LISTED_FAILURES]:
            where = o.item_id
            label = labels.get(o.item_index)
            if label and label != o.item_id:
                where = f"{o.item_id} ({label})"
            console.print(f"  {where} [{o.scorer_id}] {o.status.value}: {o.error}")
        if len(failed) > MAX_LISTED_FAILURES:
            where = f"{output} and the store" if output else f"the store; {export_hint} writes them to a file"
            console.print(f"  ... and {len(failed) - MAX_LISTED_FAILURES} more (all are in {where})")
    missing = result.n_items * len(result.scorer_ids) - len(result.outcomes)
    if missing:
        console.print(f"Not scored yet: {missing} item × scorer outcome(s) (the run was stopped).")
    usage = result.usage
    console.print("")
    if result.judge_model is None:
        console.print("Judge usage: none (code-based scoring only).")
    else:
        cost = result.cost
        at = " at Batch API prices" if result.batch_api else ""
        if not cost.unpriced:
            cost_text = f"cost {usd_text(cost.usd)}{at}"
        elif cost.priced:  # a run resumed or retried with another judge: each outcome at its own judge's price
            cost_text = f"cost {usd_text(cost.usd)}{at} for {cost.priced:,} outcome(s), {cost.unknown_text()}"
        else:
            cost_text = f"cost {cost.unknown_text()}"
        # A Batch API run sends request lines in batch files (a line its batch expired on is sent again), not requests.
        sent = f"{usage.requests:,} batch lines" if result.batch_api else f"{usage.requests:,} requests"
        console.print(
            f"Judge usage: {sent} ({usage.calls:,} answered), {usage.prompt_tokens:,} prompt + "
            f"{usage.completion_tokens:,} completion tokens, {cost_text}; "
            f"{result.cache_hits} outcome(s) served from the cache (free)."
        )


def _check_thresholds(console: _Console, result: EvalRunResult, args: argparse.Namespace) -> dict[str, str]:
    """Print each --fail-under / --fail-over outcome; returns scorer id → why it failed, for the thresholds not met."""
    failures: dict[str, str] = {}
    checks = [(sid, t, True) for sid, t in args.fail_under] + [(sid, t, False) for sid, t in args.fail_over]
    if checks:
        console.print("")
        console.print("Thresholds (--fail-under / --fail-over):")
    scores = result.scores()
    for sid, threshold, under in checks:
        mean = scores[sid].mean
        noise = 1e-9 * max(1.0, abs(threshold))  # float noise of a mean is not a failure
        if mean is None:
            failures[sid] = f"no item was scored, so the mean cannot be checked against {threshold:g}"
        elif (mean < threshold - noise) if under else (mean > threshold + noise):
            failures[sid] = f"mean {decimal_text(mean, 4)} {'<' if under else '>'} threshold {threshold:g}"
        else:
            console.print(
                f"  ok   {sid}: mean {decimal_text(mean, 4)} {'>=' if under else '<='} threshold {threshold:g}"
            )
            continue
        console.print(f"  FAIL {sid}: {failures[sid]}")
    return failures


def _write_output(console: _Console, path: str, fmt: str, store: Store, run_id: str) -> None:
    """Write the stored run's export to ``path``, streamed a chunk of rows at a time
    (:func:`scorers.runs.export.write_run_export`: the dataset's other columns and the
    dimension scores included)."""
    from scorers.runs.export import spreadsheet_overflow_note, write_run_export
    from scorers.runs.table import load_run_table

    table = load_run_table(store, run_id)
    try:
        with Path(path).expanduser().open("wb") as out:
            write_run_export(table, fmt, out)
    except OSError as exc:
        raise CLIError(
            f"{path}: cannot write the results ({exc.strerror or exc}); the run is stored: write it "
            f"again with `python -m scorers export {run_id} --output FILE`"
        ) from None
    what = (
        f"{table.n_items} items in the seeds' JSON shape"
        if fmt == "json"
        else f"{len(table.results)} rows (item × scorer)"
    )
    console.print(f"Wrote {what} to {path}.")
    if fmt == "csv" and (overflow := spreadsheet_overflow_note(table)):
        console.note(overflow)


def _write_junit(console: _Console, path: str, data: bytes) -> None:
    try:
        Path(path).expanduser().write_bytes(data)
    except OSError as exc:
        raise CLIError(f"{path}: cannot write the JUnit XML ({exc.strerror or exc})") from None
    console.print(f"Wrote JUnit XML to {path}.")


# ---- commands -----------------------------------------------------------------------------------


def _busy_text(run_id: str, owner: str | None) -> str:
    """Why a run being scored by another live process cannot be resumed from here."""
    by = f" ({owner})" if owner else ""
    return (
        f"run {run_id} is being scored by another process{by}: it is resumed by one process at a time. If that "
        f"process has died, the run is marked interrupted once it is seen gone (its pid, on this host) or "
        f"{HEARTBEAT_STALE_S:g} s after its last heartbeat; `python -m scorers runs` shows its status."
    )


def _resume_hint(run_id: str, db: str | None) -> str:
    db_flag = f" --db {db}" if db else ""
    return f"python -m scorers run --resume {run_id}{db_flag}"


def _stored_text(ended: bool, run_id: str, db: str | None) -> str:
    """Where a run stopped by Ctrl-C or a Batch API error stands: ``ended`` is what ``Store.finish_run`` returned."""
    if ended:
        return f"Run {run_id} is stored; resume it with: {_resume_hint(run_id, db)}"
    return (
        f"Run {run_id} is stored, its status left alone: it is no longer this process's (another process took it "
        "as interrupted or resumed it); `python -m scorers runs` shows its status."
    )


def _pause_text(result: EvalRunResult, run_id: str, db: str | None, outcomes: str) -> str:
    """Why the run paused by itself, then the command that resumes it, once, with ``--db`` when given.

    A budget pause's reason (stored; History shows it) already holds the command with the flag of the cap reached:
    it is completed there rather than printed again."""
    hint = _resume_hint(run_id, db)
    status = run_status_label(result.status)  # as History and `python -m scorers runs` word it
    status = status[:1].lower() + status[1:]
    if result.cap_reached and result.stop_reason:
        reason = result.stop_reason.replace(_resume_hint(run_id, None), hint)
        return f"{reason}\nRun {run_id}: {status}, with {outcomes}."
    return f"{result.stop_reason}\nRun {run_id}: {status}, with {outcomes}. Resume it with: {hint}"


def validate_thresholds(
    fail_under: Sequence[tuple[str, float]],
    fail_over: Sequence[tuple[str, float]],
    options: Mapping[str, Mapping[str, Any]],
) -> None:
    """Check ``--fail-under`` / ``--fail-over`` against the run's scorers, their direction and range.

    Args:
        fail_under: ``(scorer id, threshold)`` pairs: fail when the mean is below the threshold.
        fail_over: the same, failing when the mean is above it.
        options: the run's scorer id → options (``scale`` sets the range).

    Raises:
        CLIError: a scorer named twice by one flag; a scorer not in the run; ``--fail-under`` on a lower-is-better scorer (toxicity,
            bias, hallucination take ``--fail-over``) or ``--fail-over`` on a higher-is-better one;
            a threshold outside the scorer's range with its scale (e.g. 5 on a 0..1 scorer).
    """
    scorer_ids = list(options)
    for flag, pairs, wants_higher in (("--fail-under", fail_under, True), ("--fail-over", fail_over, False)):
        named = [name for name, _ in pairs]
        repeated = sorted({name for name in named if named.count(name) > 1})
        if repeated:
            raise CLIError(f"{flag} is given more than once for {', '.join(repeated)}: give one threshold per scorer")
        unknown = [name for name, _ in pairs if name not in scorer_ids]
        if unknown:
            raise CLIError(
                f"{flag} names {', '.join(map(repr, unknown))}, which {'is' if len(unknown) == 1 else 'are'} "
                f"not a scorer of this run; the run's scorers are {', '.join(scorer_ids)}"
            )
        for sid, threshold in pairs:
            spec = SCORERS.get(sid)
            if spec is None:
                continue
            if spec.higher_is_better is not wants_higher:
                other = "--fail-over" if wants_higher else "--fail-under"
                raise CLIError(
                    f"{flag} {sid}={threshold:g}: for {spec.name} {spec.direction}, so a threshold fails when the "
                    f"mean is {'above' if wants_higher else 'below'} it: use {other} {sid}={threshold:g}"
                )
            low, high = spec.bounds(options[sid])
            if not low <= threshold <= high:
                raise CLIError(
                    f"{flag} {sid}={threshold:g} is outside {spec.name}'s range {low:g}..{high:g} "
                    f"(its score range {spec.score_range} times the scale)"
                )


def _confirm(console: _Console, calls: int, assume_yes: bool) -> bool:
    if assume_yes or calls == 0 or not sys.stdin.isatty():
        return True
    console.raw_err("Proceed? [y/N] ")
    try:
        answer = input()
    except EOFError:
        answer = ""
    return answer.strip().lower() in ("y", "yes")


def _cmd_run(args: argparse.Namespace, console: _Console) -> int:
    if args.retry_failed and not args.resume:
        raise CLIError("--retry-failed applies to --resume RUN_ID only")
    if args.junit_items and not args.junit:
        raise CLIError("--junit-items applies with --junit FILE only")
    out_fmt = _check_output_path(args.output) if args.output else None
    if args.resume:
        fixed = [
            flag
            for flag, value in (
                ("DATASET", args.dataset),
                ("--scorer", args.scorers),
                ("--mode", args.mode),
                ("--scale", args.scale),
                ("--target", args.target),
                ("--ignore-case", args.ignore_case),
                ("--collapse-whitespace", args.collapse_whitespace),
                ("--keep-newlines", args.normalize_newlines is False),
                *((flag, getattr(args, flag[2:].replace("-", "_"))) for flag in COLUMN_FLAGS.values()),
                ("--group-col", args.group_col),
            )
            if value
        ]
        if fixed:
            raise CLIError(
                f"{', '.join(fixed)} cannot be combined with --resume: a resumed run keeps its dataset, "
                "scorers, options and columns"
            )
        return _resume(args, console, out_fmt)
    if not args.dataset:
        raise CLIError("give the DATASET file to score, or --resume RUN_ID")
    if not args.scorers:
        raise CLIError(f"choose at least one --scorer ({', '.join(SCORER_IDS)})")
    scorer_ids = list(dict.fromkeys(args.scorers))
    settings = _judge_settings(args, scorer_ids)
    _start_up(settings)
    if settings is None and args.batch_api:
        raise CLIError("--batch-api needs an LLM-judged scorer: the scorers chosen make no judge calls")
    if args.live_reasks and not args.batch_api:
        raise CLIError("--live-reasks applies to --batch-api only")
    if args.batch_api and (problem := batch_api_caps_problem(BudgetCaps.from_dict(_budget_config(args, {})["budget"]))):
        raise CLIError(problem)
    console.secret = settings.api_key if settings else None
    flags = {
        "target": args.target,
        "ignore_case": args.ignore_case,
        "collapse_whitespace": args.collapse_whitespace,
        "normalize_newlines": args.normalize_newlines,
    }
    options = _scorer_options(scorer_ids, args.scale, args.mode, **flags)
    validate_thresholds(args.fail_under, args.fail_over, options)
    for flag, option, value in (
        ("--scale", "scale", args.scale),
        ("--mode", "evaluation_mode", args.mode),
        ("--target", "target", args.target),
        ("--ignore-case", "ignore_case", args.ignore_case),
        ("--collapse-whitespace", "collapse_whitespace", args.collapse_whitespace),
        ("--keep-newlines", "normalize_newlines", args.normalize_newlines),
    ):
        if value is not None and not any(option in opts for opts in options.values()):
            console.note(f"Note: {flag} is ignored: none of the scorers {', '.join(scorer_ids)} has that option.")
    from scorers.runs.datasets import (
        DatasetError,
        blank_response_note,
        load_dataset,
        not_text_notices,
        shared_columns,
        skipped_record,
        unused_system_column,
    )

    store = _open_store(args.db, must_exist=False)
    try:
        try:
            dataset = load_dataset(args.dataset)
        except DatasetError as exc:
            raise CLIError(str(exc)) from None
        _report_load(console, dataset)
        mapping, source = _mapping(args, dataset)
        console.note(_describe_mapping(mapping, source))
        shared = shared_columns({f"{role} ({COLUMN_FLAGS[role]})": c for role, c in mapping.items() if role != "id"})
        if shared:  # the scorers would read one text as two (a response against itself scores 1)
            raise CLIError(" ".join(shared) + " Each role needs its own column: map another one with its flag.")
        for notice in not_text_notices(dataset, mapping):
            console.note(f"Note: {notice}")
        system = unused_system_column(dataset.columns, mapping)
        if system is not None:
            console.note(
                f"Column {system!r} is not used: it is never taken as the system message by its name alone. "
                f"If it holds the system prompt, pass --system-col {system}."
            )
        options = {
            sid: resolve_options(sid, opts, ground_truth_mapped=bool(mapping.get("ground_truth")))
            for sid, opts in options.items()
        }
        for sid, opts in options.items():
            if "target" in opts:
                console.note(f"{sid} compares each response with its {opts['target']} (a blank one is not scored).")
        conversation = mapping.get("messages")  # a conversation carries the prompt and system turns
        mapped = {**mapping, "output": "x"}
        mapped.update(input=mapping.get("input") or conversation, system=mapping.get("system") or conversation)
        unmapped = unmapped_fields(options, mapped)
        unmapped = {f: names for f, names in unmapped.items() if f in COLUMN_FLAGS}
        if unmapped:
            raise CLIError(
                "; ".join(
                    f"{', '.join(n)} need(s) a column mapped to the {f!r} role ({COLUMN_FLAGS[f]} COL)"
                    for f, n in unmapped.items()
                )
                + f". Columns read from the header: {dataset.columns}"
            )
        scorers = _make_scorers(options, settings, None if args.no_cache else store)
        try:
            items = _items(dataset, mapping, args.group_col)
        except DatasetError as exc:
            raise CLIError(f"{exc} Choose the columns with {', '.join(COLUMN_FLAGS.values())}.") from None
        blank_note = blank_response_note([it.payload for it in items], scorers)
        if blank_note:
            console.note(f"Note: {blank_note}")
        caps = BudgetCaps.from_dict(_budget_config(args, {})["budget"])
        calls = _print_estimate(
            console,
            {s.id: items for s in scorers},
            scorers,
            settings,
            batch_api=args.batch_api,
            price=args.price,
            max_cost=caps.max_cost_usd,
            max_tokens=caps.max_total_tokens,
        )
        if not _confirm(console, calls, args.yes):
            console.note("Not confirmed: nothing was scored.")
            return EXIT_INTERRUPTED
        concurrency = args.concurrency or DEFAULT_CONCURRENCY
        run_id = store.create_run(
            dataset_name=Path(dataset.source_name).name,
            items=[(it.item_id, it.payload, it.groups, it.columns) for it in items],
            scorers=[{"id": s.id, "name": s.name, "options": options[s.id]} for s in scorers],
            judge=judge_record(settings),
            mapping={**mapping, "groups": list(args.group_col)},
            config={
                "source": "cli",
                "dataset": str(dataset.source_name),
                "scorerOptions": options,
                "concurrency": concurrency,
                "item_timeout": args.item_timeout,
                "cache": not args.no_cache,
                "batch_api": args.batch_api,
                "live_follow_ups": args.live_reasks,
                **_budget_config(args, {}),
                **skipped_record(dataset.skipped),
            },
        )
        labels = {i: dataset.row_label(i) for i in range(len(items))}
        return _execute(
            args,
            console,
            store,
            run_id,
            scorers,
            items,
            concurrency,
            labels,
            out_fmt,
            skipped_at_load=len(dataset.skipped),
        )
    finally:
        store.close()


def _resume(args: argparse.Namespace, console: _Console, out_fmt: str | None) -> int:
    store = _open_store(args.db, must_exist=True)
    try:
        store.mark_interrupted()  # a run whose process died can be resumed at once
        try:
            run, items, previous = load_run(store, args.resume)
        except KeyError:
            raise CLIError(
                f"no run with id {args.resume!r} in {store.display_name}; `python -m scorers runs` lists the stored runs"
            ) from None
        if run["status"] == "running":
            raise CLIError(_busy_text(args.resume, run["owner"]))
        config = run["config"] or {}
        stored_options = recorded_scorer_options(run)
        scorer_ids = [s["id"] for s in run["scorers"]]
        unknown = [sid for sid in scorer_ids if stored_options.get(sid, {}) is None]
        if unknown:  # rebuilt at their defaults, they would score the rest of the run with other options
            raise CLIError(
                f"run {args.resume} does not record the options of {', '.join(unknown)} (scorers of its caller's "
                "own code): resume it from Python with the same scorers (run_evals(..., run_id=...))"
            )
        options = {sid: stored_options.get(sid) or _scorer_options([sid], None, None)[sid] for sid in scorer_ids}
        if not any(stored_options.values()):
            console.note("Note: this run does not record its scorers' options; they are rebuilt with default options.")
        validate_thresholds(args.fail_under, args.fail_over, options)
        settings = _judge_settings(args, scorer_ids, run["judge"])
        _start_up(settings)
        console.secret = settings.api_key if settings else None
        no_cache = args.no_cache or config.get("cache") is False
        scorers = _make_scorers(options, settings, None if no_cache else store)
        console.note(
            f"Resuming run {args.resume} ({run['name']}): {len(items)} items, scorers {', '.join(scorer_ids)}."
        )
        redo = {
            (o.item_index, o.scorer_id) for o in previous.outcomes if not (args.retry_failed and o.status.retryable)
        }
        todo = {sid: [it for i, it in enumerate(items) if (i, sid) not in redo] for sid in scorer_ids}
        args.batch_api = args.batch_api or bool(config.get("batch_api"))
        args.live_reasks = args.live_reasks or bool(config.get("live_follow_ups"))
        caps = BudgetCaps.from_dict(_budget_config(args, config)["budget"])
        if args.batch_api and (problem := batch_api_caps_problem(caps)):
            raise CLIError(f"{problem} A cap the run recorded is removed with none, e.g. --max-cost none.")
        model = judge_model_of(scorers)
        price = _resume_price(args, run, model)
        spent = 0.0  # what the run spent, each model at its price (as run_evals counts it against the cost cap)
        spend = spend_by_judge(store, args.resume) if caps.any else []
        if caps.max_cost_usd is not None:
            prices = {**run_prices(run), **({model: price} if model and price else {})}
            spent = run_cost(spend, prices=prices).total_usd or 0.0
        calls = _print_estimate(
            console,
            todo,
            scorers,
            settings,
            batch_api=args.batch_api,
            price=price,
            price_source="the price set with --price" if args.price else "the price recorded with the run",
            max_cost=caps.max_cost_usd,
            spent=spent,
            max_tokens=caps.max_total_tokens,
            spent_tokens=sum(s.prompt_tokens + s.completion_tokens for s in spend),  # as run_evals counts them
        )
        if not _confirm(console, calls, args.yes):
            console.note("Not confirmed: nothing was scored.")
            return EXIT_INTERRUPTED
        concurrency = args.concurrency or config.get("concurrency") or DEFAULT_CONCURRENCY
        item_timeout = args.item_timeout if args.item_timeout is not None else config.get("item_timeout")
        return _execute(
            args,
            console,
            store,
            args.resume,
            scorers,
            items,
            concurrency,
            {},
            out_fmt,
            item_timeout=item_timeout,
            retry_failed=args.retry_failed,
        )
    finally:
        store.close()


def _note_stored_limits(console: _Console, store: Store, run: Mapping[str, Any]) -> None:
    """Say what a resume stored with ``run`` (as it was before): the caps and the prices it was given."""
    after = store.get_run(run["id"])
    changes = [
        f"the price {p.input_per_million:g},{p.output_per_million:g} USD per million input,output tokens for {model}"
        for model, p in run_prices(after).items()
        if run_prices(run).get(model) != p
    ]
    caps = BudgetCaps.from_dict((after["config"] or {}).get("budget"))
    if caps != BudgetCaps.from_dict((run["config"] or {}).get("budget")):
        changes.append(f"the caps: {caps.describe()}" if caps.any else "no caps")
    if changes:
        console.note(
            f"Stored with run {run['id']} (its cost in History and the report, and a later resume, use them): "
            + "; ".join(changes)
            + "."
        )


def _resume_price(args: argparse.Namespace, run: Mapping[str, Any], model: str | None) -> Price | None:
    """The price of the judge ``model`` resuming ``run``: ``--price``, else the one recorded for it, else None."""
    return args.price or (run_prices(run).get(model) if model else None)


def _budget_config(args: argparse.Namespace, config: Mapping[str, Any]) -> dict[str, Any]:
    """The run's ``budget`` caps and judge ``price`` (config keys): the flags given (``none``: no cap), else what
    ``config`` recorded."""
    caps = BudgetCaps.from_dict(config.get("budget")).to_dict()
    for key, value in (
        ("max_judge_calls", args.max_judge_calls),
        ("max_total_tokens", args.max_total_tokens),
        ("max_cost_usd", args.max_cost),
    ):
        if value is not None:
            caps[key] = None if value == NO_CAP else value
    price = [args.price.input_per_million, args.price.output_per_million] if args.price else config.get("price")
    return {"budget": caps, "price": price}


def _execute(
    args: argparse.Namespace,
    console: _Console,
    store: Store,
    run_id: str,
    scorers: Sequence[Scorer],
    items: Sequence[EvalItem],
    concurrency: int,
    labels: Mapping[int, str],
    out_fmt: str | None,
    *,
    item_timeout: float | None = None,
    retry_failed: bool = False,
    skipped_at_load: int = 0,
) -> int:
    """Score the run's remaining outcomes with a progress bar and Ctrl-C handling; summary; exit code."""
    if item_timeout is None:
        item_timeout = args.item_timeout
    run, _, before = load_run(store, run_id)
    caps = BudgetCaps.from_dict(_budget_config(args, run["config"] or {})["budget"])
    model = judge_model_of(scorers)
    price = _resume_price(args, run, model)
    if caps.max_cost_usd is not None and (model is None or price_for(model, price) is None):
        raise CLIError(
            f"--max-cost needs the judge's price, and model {model!r} has no list price: give it with --price IN,OUT"
        )
    if caps.any:
        console.note(f"Budget: {caps.describe()} for the whole run.")
    keep = {(o.item_index, o.scorer_id): o for o in before.outcomes if not (retry_failed and o.status.retryable)}
    complete = [i for i in range(len(items)) if all((i, s.id) in keep for s in scorers)]
    progress = Progress(
        console.err,
        len(items),
        done=len(complete),
        failed=sum(item_progress(keep[(i, s.id)].status for s in scorers) == "failed" for i in complete),
        missing=sum(item_progress(keep[(i, s.id)].status for s in scorers) == "missing" for i in complete),
    )
    console.note(
        f"Run {run_id}: scoring {len(items) - len(complete)} of {len(items)} items with "
        f"{', '.join(s.id for s in scorers)} (concurrency {concurrency}); results are stored in "
        f"{store.display_name}. Ctrl-C stops and keeps what is done."
    )
    cancel = threading.Event()

    def on_sigint(signum: int, frame: Any) -> None:
        cancel.set()
        signal.signal(signal.SIGINT, signal.default_int_handler)
        console.raw_err("\nStopping: waiting for the judge calls in flight to finish ...\n")

    def on_item(index: int, item: EvalItem, outcomes: list[Any]) -> None:
        progress.item_done(item_progress(o.status for o in outcomes))

    in_main = threading.current_thread() is threading.main_thread()
    previous_handler = signal.signal(signal.SIGINT, on_sigint) if in_main else None
    freeze_start_up()
    progress.start()
    try:
        if args.batch_api:
            console.note(f"Batch API mode: the judge calls go in batches, polled every {args.poll_interval:g} s.")
            result = run_batch_api(
                [],
                scorers,
                store=store,
                run_id=run_id,
                retry_failed=retry_failed,
                live_follow_ups=args.live_reasks,
                poll_interval=args.poll_interval,
                on_item_complete=on_item,
                on_progress=console.note,
                cancel=cancel,
            )
            # run_batch_api takes no price: a resume's is stored as run_evals stores it, and the usage line
            # prices each model's outcomes at the price stored for it, as History and the report do.
            config = limits_config(run, model, price=price)
            if config != (run["config"] or {}):
                store.set_run_config(run_id, config)
            result = replace(result, prices=run_prices({**run, "config": config}))
        else:
            result = run_evals(
                [],
                scorers,
                concurrency=concurrency,
                item_timeout=item_timeout,
                store=store,
                run_id=run_id,
                retry_failed=retry_failed,
                on_item_complete=on_item,
                cancel=cancel,
                max_consecutive_failures=args.max_consecutive_failures,
                budget=caps,
                price=price,
            )
    except KeyboardInterrupt:
        progress.close()
        ended = store.finish_run(run_id, "cancelled")
        _note_stored_limits(console, store, run)
        console.note(f"Interrupted. {_stored_text(ended, run_id, args.db)}")
        return EXIT_INTERRUPTED
    except ValueError as exc:  # a cost cap that cannot be kept: refused before the run was claimed
        progress.close()
        raise CLIError(str(exc)) from None
    except RunBusy:  # another process resumed it a moment ago: nothing was sent from here
        progress.close()
        raise CLIError(_busy_text(run_id, None)) from None
    except JudgeError as exc:  # the Batch API's Files or Batches endpoint failed; the batch ids are stored
        progress.close()
        ended = store.finish_run(run_id, "cancelled")
        console.note(f"error: {exc}\n{_stored_text(ended, run_id, args.db)}")
        return EXIT_INTERRUPTED
    finally:
        if previous_handler is not None:
            signal.signal(signal.SIGINT, previous_handler)
    progress.close()
    _note_stored_limits(console, store, run)
    db = f" --db {args.db}" if args.db else ""  # as the resume hint writes it
    export_hint = f"python -m scorers export {run_id}{db} --output results.csv"
    _print_summary(console, result, items, scorers, labels, args.output, export_hint)
    stopped = cancel.is_set() or result.status != "completed"
    failures = {} if stopped else _check_thresholds(console, result, args)
    thresholds_met = not failures
    console.print("")
    console.print(f"Run id: {run_id} (store {store.display_name})")
    if out_fmt is not None:
        _write_output(console, args.output, out_fmt, store, run_id)
    if args.junit:
        from scorers.analysis.junit import run_junit  # (it imports an XML library)

        _write_junit(console, args.junit, run_junit(result, failures, per_item=args.junit_items))
    outcomes = f"{len(result.outcomes)} of {result.n_items * len(result.scorer_ids)} outcomes"
    if result.status in PAUSED_STATUSES:
        console.note(_pause_text(result, run_id, args.db, outcomes))
        return EXIT_PAUSED
    if stopped:
        why = f"{result.stop_reason} Run" if result.stop_reason else "run"  # e.g. the worker process died, and how
        console.note(
            f"Interrupted: {why} {run_id} stopped with {outcomes}. Resume it with: {_resume_hint(run_id, args.db)}"
        )
        return EXIT_INTERRUPTED
    if not thresholds_met:
        return EXIT_THRESHOLD
    if skipped_at_load:
        console.note(
            f"{skipped_at_load} record(s) of the dataset could not be loaded and were not scored (listed above)."
        )
    if result.n_failed or skipped_at_load:
        return EXIT_UNSCORED
    return EXIT_OK


def _cmd_runs(args: argparse.Namespace, console: _Console) -> int:
    target = args.db or default_db()
    if "://" not in target and not Path(target).expanduser().exists():
        console.print(f"No runs stored: there is no database at {Path(target).expanduser()}.")
        return EXIT_OK
    store = _open_store(args.db, must_exist=True)
    try:
        store.mark_interrupted()  # a run whose process died says so (its pid gone, its heartbeat stale)
        runs = store.list_runs()
        if args.limit:
            runs = runs[: args.limit]
        # A run resumed or retried with another judge names every model its outcomes were made by.
        models = {run["id"]: list(dict.fromkeys(m for m, _, _ in judges_used(store, run["id"]))) for run in runs}
    finally:
        store.close()
    if not runs:
        console.print(f"No runs stored in {store.display_name}.")
        return EXIT_OK
    rows = []
    for run in runs:
        judge = run["judge"] or {}
        used = models[run["id"]]
        rows.append(
            [
                run["id"],
                run["created_at"][:16].replace("T", " "),
                run_status_label(run["status"]),
                str(run["n_items"]),
                ", ".join(used) if len(used) > 1 else judge.get("model") or "-",
                run["dataset_name"],
                run["name"],
            ]
        )
    lines = _table(
        ["id", "created (UTC)", "status", "items", "model", "dataset", "name"],
        rows,
        [False, False, False, True, False, False, False],
    )
    console.print(lines[0])
    for line, run in zip(lines[1:], runs, strict=True):
        console.print(line)
        for scorer in run["scorers"]:
            stats = run["stats"].get(scorer["id"], {})
            # Pending: never scored (a stopped run), as History counts them.
            n_stored = (stats.get("n_scored") or 0) + (stats.get("n_failed") or 0)
            counts = _outcome_counts(stats) + f", {max(0, run['n_items'] - n_stored)} pending"
            variants = run["variant_stats"].get(scorer["id"])
            if not variants:
                console.print(f"    {scorer['id']}: mean {_fmt(stats.get('mean'))}, {counts}")
                continue
            # A run of variants: a mean over every variant's responses mixes them, so each variant has its own.
            console.print(f"    {scorer['id']}: {counts}")
            for variant, by_variant in variants.items():
                console.print(
                    f"      variant {variant}: mean {_fmt(by_variant['mean'])}, {_outcome_counts(by_variant)}"
                )
    return EXIT_OK


def _outcome_counts(stats: Mapping[str, Any]) -> str:
    """ "n scored, n failed[, n not scored (input)]" of :meth:`~scorers.runs.store.Store.list_runs`' stats."""
    # A missing or invalid input is not scored, not a failure (ScoreStatus.retryable).
    n_input = stats.get("n_input") or 0
    n_failed = (stats.get("n_failed") or 0) - n_input
    return f"{stats.get('n_scored') or 0} scored, {n_failed} failed" + (
        f", {n_input} not scored (input)" if n_input else ""
    )


def _cmd_export(args: argparse.Namespace, console: _Console) -> int:
    fmt = _check_output_path(args.output)
    store = _open_store(args.db, must_exist=True)
    try:
        try:
            store.get_run(args.run_id)
        except KeyError:
            raise CLIError(
                f"no run with id {args.run_id!r} in {store.display_name}; `python -m scorers runs` lists the stored runs"
            ) from None
        _write_output(console, args.output, fmt, store, args.run_id)
    finally:
        store.close()
    return EXIT_OK


def _cmd_db(args: argparse.Namespace, console: _Console) -> int:
    source = _open_store(args.source, must_exist=True)
    try:
        target = _open_store(args.target, must_exist=False)
        try:
            try:
                copied = copy_store(source, target)
            except (ValueError, sqlite3.DatabaseError) as exc:
                raise CLIError(str(exc)) from None
        finally:
            target.close()
    finally:
        source.close()
    rows = [[table, f"{n:,}"] for table, n in copied.items()]
    for line in _table(["table", "rows"], rows, [False, True]):
        console.print(line)
    console.print(f"Copied {source.display_name} to {target.display_name}: every table's count matches.")
    return EXIT_OK


def _cmd_report(args: argparse.Namespace, console: _Console) -> int:
    from scorers.analysis.report import run_comparison_report, run_report

    store = _open_store(args.db, must_exist=True)
    try:
        try:
            if args.compare_with:
                document = run_comparison_report(store, args.run_id, args.compare_with, max_rows=args.rows)
            else:
                document = run_report(store, args.run_id, max_rows=args.rows)
        except KeyError as exc:
            raise CLIError(
                f"{exc.args[0]} in {store.display_name}; `python -m scorers runs` lists the stored runs"
            ) from None
    finally:
        store.close()
    try:
        Path(args.output).expanduser().write_text(document, encoding="utf-8")
    except OSError as exc:
        raise CLIError(f"{args.output}: cannot write the report ({exc.strerror or exc})") from None
    what = f"run {args.run_id} against {args.compare_with}" if args.compare_with else f"run {args.run_id}"
    console.print(f"Wrote the report of {what} to {args.output} ({len(document) / 1e6:.1f} MB, self-contained).")
    return EXIT_OK


def main(argv: Sequence[str] | None = None, *, stdout: TextIO | None = None, stderr: TextIO | None = None) -> int:
    """Run the command line and return its exit code (see the module docstring).

    Args:
        argv: the arguments without the program name; None for ``sys.argv[1:]``.
        stdout, stderr: where to print; default ``sys.stdout`` / ``sys.stderr``.

    Returns:
        0, 1, 2, 3, 4, 130 or 141 as documented.
    """
    console = _Console(stdout or sys.stdout, stderr or sys.stderr)
    parser = build_parser()
    try:
        args = parser.parse_args(_price_values_attached(list(sys.argv[1:] if argv is None else argv)))
    except SystemExit as exc:  # argparse prints its own message; --help exits 0
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE
    from scorers.cli_gate import cmd_baseline, cmd_gate

    commands = {
        "run": _cmd_run,
        "runs": _cmd_runs,
        "export": _cmd_export,
        "report": _cmd_report,
        "gate": cmd_gate,
        "baseline": cmd_baseline,
        "db": _cmd_db,
    }
    try:
        return commands[args.command](args, console)
    except CLIError as exc:
        console.note(f"error: {exc}")
        return EXIT_USAGE
    except KeyboardInterrupt:
        console.note("Interrupted.")
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        _drop_output(console.out)
        return EXIT_BROKEN_PIPE


def _drop_output(stream: TextIO) -> None:
    """Point ``stream``'s file at /dev/null, so what is still buffered for a reader that left is dropped
    and the interpreter's last flush raises nothing (the recipe of Python's ``signal`` docs, "Note on SIGPIPE")."""
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):  # io.UnsupportedOperation is both OSError and ValueError
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, fd)
    os.close(devnull)


__all__ = [
    "EXIT_BROKEN_PIPE",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_PAUSED",
    "EXIT_THRESHOLD",
    "EXIT_UNSCORED",
    "EXIT_USAGE",
    "Progress",
    "build_parser",
    "main",
]

if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
