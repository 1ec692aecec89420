"""The report of ``vcr_kit drift``: one row per fixture, the table, the plan of a dry
run, the JSON document, the verdict per test."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from .._core.answer_verdict import worst
from .._store.scan import Fixture
from ._common import plural

if TYPE_CHECKING:
    from .._core.drift_rules import Destination
    from .._engine.resend import LiveAnswer

__all__ = ["SKIPPED", "UNANSWERED", "Row", "print_plan", "print_report", "report_of"]

#: What a row says when no live answer could be compared.
UNANSWERED: Final = "unanswered"
SKIPPED: Final = "skipped"


@dataclass
class Row:
    """One fixture of the report."""

    fixture: Fixture
    relative: str
    kind: str
    tests: list[str] = field(default_factory=list)
    verdict: str = ""
    reasons: list[str] = field(default_factory=list)
    estimate_usd: float = 0.0
    recorded: dict[str, float] = field(default_factory=dict)
    live: dict[str, float] = field(default_factory=dict)
    #: What became of the live answer: "written to PATH" or "not written: WHY".
    written: str = ""
    answer: LiveAnswer | None = None
    #: Where the live answer may be written (``drift_rules.destination``), set before
    #: the request is sent.
    destination: Destination | None = None

    @property
    def doc(self) -> dict[str, Any]:
        assert self.fixture.doc is not None
        return self.fixture.doc


def report_of(
    rows: list[Row], target: str, models: dict[str, str], estimate: float
) -> dict[str, Any]:
    """The report as JSON: counts, cost, the verdict per test and per fixture."""
    compared = [row for row in rows if row.verdict not in (SKIPPED, "")]
    counts = {name: sum(1 for row in compared if row.verdict == name) for name in
              ("identical", "benign", "regression", "api drift", UNANSWERED)}
    per_test: dict[str, list[str]] = {}
    for row in compared:
        for test in row.tests:
            per_test.setdefault(test, []).append(row.verdict)
    failed = any(row.verdict in ("regression", "api drift", UNANSWERED) for row in compared)
    return {
        "target": target,
        "models": models,
        "estimate_usd": round(estimate, 6),
        "recorded_usd": round(sum(row.recorded.get("usd", 0.0) for row in compared), 6),
        "live_usd": round(sum(row.live.get("usd", 0.0) for row in compared), 6),
        "counts": counts,
        "failed": failed,
        "tests": {
            test: _worst_of(verdicts) for test, verdicts in sorted(per_test.items())
        },
        "fixtures": [
            {
                "fixture": row.relative,
                "kind": row.kind,
                "tests": row.tests,
                "verdict": row.verdict,
                "reasons": row.reasons,
                "recorded": row.recorded,
                "live": row.live,
                **({"written": row.written} if row.written else {}),
            }
            for row in rows
        ],
    }


def _worst_of(verdicts: list[str]) -> str:
    if UNANSWERED in verdicts:
        return UNANSWERED
    return worst(verdicts)


def _table(header: Sequence[str], lines: Sequence[Sequence[str]]) -> list[str]:
    widths = [len(cell) for cell in header]
    for line in lines:
        widths = [max(width, len(cell)) for width, cell in zip(widths, line, strict=True)]
    return [
        "  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True)).rstrip()
        for line in [header, *lines]
    ]


def print_plan(
    rows: list[Row], to_send: list[Row], target: str, estimate: float, *, unpriced: str,
    budget: float | None,
) -> int:
    lines = [
        (row.kind, row.relative, f"${row.estimate_usd:.4f}") for row in to_send
    ]
    for line in _table(("KIND", "FIXTURE", "ESTIMATE"), lines):
        print(line)
    skipped = [row for row in rows if row.verdict == SKIPPED]
    for row in skipped:
        print(f"skip  {row.relative}: {row.reasons[0]}")
    over = ""
    if budget is not None and estimate > budget:
        over = f"; over the --budget of ${budget:.4f}: a run would be refused"
    print(
        f"dry run: would send {plural(len(to_send), 'request')} to {target}, "
        f"estimated ${estimate:.4f}{unpriced}{over}; nothing was sent"
    )
    return 0


def print_report(rows: list[Row], report: dict[str, Any], models: dict[str, str]) -> None:
    lines = []
    for row in rows:
        if row.verdict == SKIPPED and row.reasons == ["not in the --sample"]:
            continue
        why = row.reasons[0] if row.reasons else ""
        if len(row.reasons) > 1:
            why += f" (+{len(row.reasons) - 1} more)"
        lines.append((row.verdict, row.relative, ", ".join(row.tests) or "-", why))
    for line in _table(("VERDICT", "FIXTURE", "TEST", "WHY"), lines):
        print(line)
    if report["tests"]:
        print()
        for line in _table(("TEST", "VERDICT"), sorted(report["tests"].items())):
            print(line)
    counts = ", ".join(f"{n} {name}" for name, n in report["counts"].items() if n)
    print()
    print(f"{counts or 'nothing compared'}; sent to {report['target']}")
    if models:
        recorded = _sum(rows, "recorded")
        live = _sum(rows, "live")
        print(
            f"tokens: recorded {recorded['input_tokens']:.0f} in / "
            f"{recorded['output_tokens']:.0f} out, ${recorded['usd']:.4f}; "
            f"{', '.join(f'{k}={v}' if k != '*' else v for k, v in models.items())} "
            f"{live['input_tokens']:.0f} in / {live['output_tokens']:.0f} out, "
            f"${live['usd']:.4f}"
        )
    else:
        print(f"cost: estimated ${report['estimate_usd']:.4f}, spent ${report['live_usd']:.4f}")


def _sum(rows: list[Row], side: str) -> dict[str, float]:
    total = {"input_tokens": 0.0, "output_tokens": 0.0, "usd": 0.0}
    for row in rows:
        for key, value in getattr(row, side).items():
            total[key] = total.get(key, 0.0) + value
    return total
