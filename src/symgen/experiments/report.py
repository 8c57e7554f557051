"""One self-contained HTML page: claims table, timing, then one section per experiment with its
figures embedded as base64 PNG."""

from __future__ import annotations

import base64
import html
import json
import platform
from pathlib import Path

import torch

from symgen.experiments.claims import VERDICT_LEGEND, VERDICTS, ClaimResult, JudgedPart
from symgen.experiments.types import Link, Section, Table

STYLE = """
body{font-family:system-ui,sans-serif;max-width:1300px;margin:2em auto;padding:0 1em;color:#222}
.wide{max-width:100%;overflow-x:auto}
table{border-collapse:collapse;margin:1em 0;font-size:13px}
td,th{border:1px solid #ccc;padding:3px 6px;text-align:left;vertical-align:top;overflow-wrap:break-word}
td:first-child{white-space:nowrap}
th{background:#f3f3f3;font-weight:600} .reproduced{background:#dff5df} .not-reproduced{background:#fbe0e0}
.partly-reproduced{background:#fdf3d7}
.not-run,.not-judged{color:#888}
ul.parts{margin:0;padding-left:1.1em} ul.parts ul{margin:0;padding-left:1.1em;color:#444}
.outcome{font-weight:600;padding:0 3px;border-radius:3px} .outcome.pass{background:#c9eec9}
.outcome.fail{background:#f6c6c6} .outcome.mixed{background:#fae7b0} .outcome.not-judged{background:#e4e4e4}
table.legend td{font-size:13px} img{max-width:100%;border:1px solid #eee;margin:.5em 0}
figure{display:inline-block;width:49%;margin:0;vertical-align:top} caption{text-align:left;color:#555}
figcaption{color:#333;font-size:13px;font-weight:600}
.scale{background:#fff7dd;border:1px solid #e8d9a0;padding:.6em 1em}
"""
SCALE = {
    "smoke": "Smoke scale: tiny models trained for a few dozen steps check that every command, run and "
    "analysis works end to end. They do not learn the tasks, so the verdicts below test the plumbing, "
    "not the papers.",
    "quick": "Quick scale: the papers' setups shrunk to train on a 2-core CPU (models of about 0.1-0.3M "
    "parameters, minutes per run). An effect that needs the papers' model sizes or training lengths may "
    "not appear here; a 'not reproduced' speaks for this scale only.",
    "mid": "Mid scale: between quick and paper, for the questions quick scale leaves open (models of about "
    "1M parameters, d = 128, hours per part on a 2-core CPU). A result here says what width does between "
    "the quick models and the papers' 60-75M-parameter ones, not what the papers' sizes give.",
    "paper": "Paper scale: the papers' sizes and training lengths (a GPU is needed).",
}


def _evidence(item: str) -> str:
    """A link to the figure or run an evidence entry names, relative to the report: figures/…png, or a
    run's summary.json (runs/NAME[/seed-N]); anything else is shown as text."""
    if item.endswith(".png"):
        name, href = item.split("figures/", 1)[-1], item
    elif item.startswith("runs/") or "/runs/" in item:  # a run of this output, or of a book's part
        name, href = item.split("runs/", 1)[1], f"{item}/summary.json"
    else:
        return html.escape(item)
    return f'<a href="{html.escape(href)}">{html.escape(name)}</a>'


def _table(table: Table) -> str:
    head = "".join(f"<th>{html.escape(str(h))}</th>" for h in table.headers)
    rows = "".join("<tr>" + "".join(f"<td>{_cell(c)}</td>" for c in row) + "</tr>" for row in table.rows)
    caption = f"<caption>{html.escape(table.caption)}</caption>" if table.caption else ""
    return f'<div class="wide"><table>{caption}<tr>{head}</tr>{rows}</table></div>'


def _cell(value: object) -> str:
    if isinstance(value, Link):
        return f'<a href="{html.escape(value.href)}">{html.escape(value.text)}</a>'
    return html.escape(_fmt(value))


def _fmt(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value)


def _scale_note(suite: str) -> str:
    """The scale note of each suite the page covers (a book merges parts of several: quick+mid)."""
    notes = [SCALE[s] for s in suite.split("+") if s in SCALE]
    return "".join(f'<p class="scale">{html.escape(n)}</p>' for n in notes)


def _figure(path: Path, note: str = "") -> str:
    data = base64.b64encode(path.read_bytes()).decode()
    caption = f"<figcaption>{html.escape(note)}</figcaption>" if note else ""
    # the caption (a seed, say) stands above its figure, where it cannot be read as the next one's
    return (
        f'<figure>{caption}<img alt="{html.escape(path.name)}" src="data:image/png;base64,{data}"></figure>'
    )


def _num(value: float) -> str:
    return f"{value:.0f}" if float(value).is_integer() else f"{value:.3f}"


def _legend() -> str:
    rows = "".join(
        f'<tr class="{v.replace(" ", "-")}"><td>{html.escape(v)}</td><td>{html.escape(text)}</td></tr>'
        for v, text in VERDICT_LEGEND.items()
    )
    parts = (
        "Each claim is split into the parts of its sentence; a part is judged on every seed and reads "
        "pass, fail, mixed (passes on some seeds only) or not judged (it says why). Thresholds are "
        "stated in each part's text, before any run; numbers are given per seed. An accuracy reads "
        "value [95 % Wilson interval], n = items; a part whose interval crosses its bar is marked "
        "'within noise' beside its outcome (the outcome stands; n cannot say which side of the bar holds)."
    )
    head = "<tr><th>verdict</th><th>meaning</th></tr>"
    return f'<div class="wide"><table class="legend">{head}{rows}</table></div><p>{parts}</p>'


def _part(part: JudgedPart) -> str:
    per_seed = "".join(
        f"<li>seed {html.escape(s)}: {html.escape(part.outcomes[s])}"
        + (" (within noise)" if part.noise.get(s) else "")
        + (f" — {html.escape(m)}" if m else "")
        + "</li>"
        for s, m in part.measured.items()
    )
    summary = ""
    if part.summary:
        items = "; ".join(
            f"{html.escape(k)} {_num(v['mean'])} [{_num(v['min'])}–{_num(v['max'])}]"
            for k, v in part.summary.items()
        )
        summary = f"<details><summary>mean [min–max] over seeds</summary>{items}</details>"
    css = part.outcome.replace(" ", "-")
    badge = f'<span class="outcome {css}">{html.escape(part.outcome)}</span>'
    if part.noise:
        badge += " <small>(within noise on seed " + ", ".join(map(html.escape, part.noise)) + ")</small>"
    return f"<li>{badge} {html.escape(part.text)}<ul>{per_seed}</ul>{summary}</li>"


def _claims(claims: list[ClaimResult], suite: str) -> str:
    rows = []
    for c in claims:
        css = c.verdict.replace(" ", "-")
        verdict = c.verdict + (" (smoke scale)" if suite == "smoke" and c.verdict != "not run" else "")
        seeds = f"<br><small>seeds {', '.join(map(str, c.seeds))}</small>" if c.seeds else ""
        parts = '<ul class="parts">' + "".join(_part(p) for p in c.parts) + "</ul>" if c.parts else "—"
        notes = "".join(
            f"<p><small>seed {html.escape(s)}: {html.escape(n)}</small></p>" for s, n in c.notes.items()
        )
        source = ""
        if c.source:
            where = f"{c.source.get('command', '')} @ {c.source.get('commit', '')}"
            source = f"<br><small>{html.escape(where)}</small>"
        cells = [
            html.escape(c.id),
            html.escape(c.claim),
            html.escape(c.paper),
            html.escape(verdict) + seeds + source,
            parts + notes,
            ", ".join(_evidence(e) for e in c.evidence),
        ]
        rows.append(f'<tr class="{css}">' + "".join(f"<td>{x}</td>" for x in cells) + "</tr>")
    head = "".join(
        f"<th>{h}</th>" for h in ("id", "claim", "paper", "verdict", "parts, per seed", "evidence")
    )
    return f'<div class="wide"><table><tr>{head}</tr>{"".join(rows)}</table></div>'


def _selection(header: dict) -> str:
    """What `reproduce --set` and `--runs` changed in this output, above the scale note (which
    describes the suite's own settings); nothing when neither was given."""
    lines = []
    if header.get("set"):
        sets = ", ".join(f"<code>{html.escape(s)}</code>" for s in header["set"])
        lines.append(
            f"Every run of this invocation was changed by --set {sets} (after its suite's overrides): "
            "the numbers below are not the suite's own settings."
        )
    if header.get("runs"):
        runs = ", ".join(f"<code>{html.escape(r)}</code>" for r in header["runs"])
        lines.append(
            f"Only the runs named by --runs were trained and analysed: {runs}; a claim part that needs "
            "another run is not judged."
        )
    return "".join(f'<p class="scale">{line}</p>' for line in lines)


def write_claims(path: Path, header: dict, claims: list[ClaimResult]) -> Path:
    """claims.json: where the output came from (commit, command, suite, seeds), then every claim."""
    path.write_text(json.dumps(header | {"claims": [c.to_dict() for c in claims]}, indent=1) + "\n")
    return path


def read_claims(path: Path) -> tuple[dict, list[ClaimResult]]:
    data = json.loads(Path(path).read_text())
    header = {k: v for k, v in data.items() if k != "claims"}
    return header, [ClaimResult.from_dict(c) for c in data["claims"]]


def _time_taken(timing: dict) -> str:
    """The header's sentence on time: the invocation's wall clock and its runs' training seconds."""
    if not timing:
        return ""
    where = " (one process counted once; the last section has them run by run)" if timing.get("runs") else ""
    return (
        f" Time taken: {timing['wall_seconds']:.0f} s wall clock for this invocation; "
        f"{timing['train_seconds_of_runs']:.0f} s of training summed over the runs reported here{where}."
    )


def write_report(path: Path, header: dict, sections: list[Section], claims: list[ClaimResult]) -> Path:
    suite, timing = header.get("suite", ""), header.get("timing", {})
    written, command, commit = (html.escape(str(header.get(k, ""))) for k in ("written", "command", "commit"))
    counts = {v: sum(c.verdict == v for c in claims) for v in VERDICTS}
    parts = [
        f"<!doctype html><html><head><meta charset='utf-8'><title>symgen report ({suite})</title>",
        f"<style>{STYLE}</style></head><body>",
        f"<h1>symgen reproduction — suite <code>{html.escape(suite)}</code></h1>",
        f"<p>Written {written} by <code>{command}</code> at commit <code>{commit}</code>, seeds "
        f"{', '.join(map(str, header.get('seeds', [])))}, on {html.escape(platform.machine())}, torch "
        f"{torch.__version__}, {torch.get_num_threads()} CPU "
        f"thread{'s' if torch.get_num_threads() != 1 else ''}{', CUDA' if torch.cuda.is_available() else ''}."
        + _time_taken(timing)
        + "</p>",
        _selection(header),
        _scale_note(suite),
        "<p>Claims: " + ", ".join(f"{n} {v}" for v, n in counts.items() if n) + ".</p>",
        "<h2>Claims</h2>",
        _legend(),
        _claims(claims, suite),
    ]
    for section in sections:
        parts.append(f"<h2>{html.escape(section.title)}</h2>")
        parts += [f"<p>{html.escape(p)}</p>" for p in section.paragraphs]
        parts += [_table(t) for t in section.tables]
        parts += [_figure(f, section.figure_notes.get(str(f), "")) for f in section.figures]
    parts.append("</body></html>")
    path.write_text("\n".join(parts))
    return path
