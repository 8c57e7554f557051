"""One self-contained HTML page: claims table, timing, then one section per experiment with its
figures embedded as base64 PNG."""

from __future__ import annotations

import base64
import datetime
import html
import platform
from pathlib import Path

import torch

from symgen.experiments.claims import VERDICTS, Claim
from symgen.experiments.types import Section, Table

STYLE = """
body{font-family:system-ui,sans-serif;max-width:1300px;margin:2em auto;padding:0 1em;color:#222}
.wide{max-width:100%;overflow-x:auto}
table{border-collapse:collapse;margin:1em 0;font-size:13px}
td,th{border:1px solid #ccc;padding:3px 6px;text-align:left;vertical-align:top;overflow-wrap:break-word}
td:first-child{white-space:nowrap}
th{background:#f3f3f3;font-weight:600} .reproduced{background:#dff5df} .not-reproduced{background:#fbe0e0}
.partly-reproduced{background:#fdf3d7}
.not-run,.not-judged{color:#888} img{max-width:100%;border:1px solid #eee;margin:.5em 0}
figure{display:inline-block;width:49%;margin:0;vertical-align:top} caption{text-align:left;color:#555}
figcaption{color:#555;font-size:13px}
.scale{background:#fff7dd;border:1px solid #e8d9a0;padding:.6em 1em}
"""
SCALE = {
    "smoke": "Smoke scale: tiny models trained for a few dozen steps check that every command, run and "
    "analysis works end to end. They do not learn the tasks, so the verdicts below test the plumbing, "
    "not the papers.",
    "quick": "Quick scale: the papers' setups shrunk to train on a 2-core CPU (models of about 0.1-0.3M "
    "parameters, minutes per run). An effect that needs the papers' model sizes or training lengths may "
    "not appear here; a 'not reproduced' speaks for this scale only.",
    "paper": "Paper scale: the papers' sizes and training lengths (a GPU is needed).",
}


def _evidence(item: str) -> str:
    """A link to the run directory or figure an evidence entry names (relative to the report)."""
    path = Path(item)
    if item.endswith(".png"):
        name, href = path.name, f"figures/{path.name}"
    elif "*" in item or " " in item:
        return html.escape(item)
    else:  # a run directory, or one seed of a stacked run: runs/NAME/seed-N
        name = f"{path.parent.name}/{path.name}" if path.name.startswith("seed-") else path.name
        href = f"runs/{name}/"
    return f'<a href="{html.escape(href)}">{html.escape(name)}</a>'


def _table(table: Table) -> str:
    head = "".join(f"<th>{html.escape(str(h))}</th>" for h in table.headers)
    rows = "".join(
        "<tr>" + "".join(f"<td>{html.escape(_fmt(c))}</td>" for c in row) + "</tr>" for row in table.rows
    )
    caption = f"<caption>{html.escape(table.caption)}</caption>" if table.caption else ""
    return f'<div class="wide"><table>{caption}<tr>{head}</tr>{rows}</table></div>'


def _fmt(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value)


def _figure(path: Path, note: str = "") -> str:
    data = base64.b64encode(path.read_bytes()).decode()
    caption = f"<figcaption>{html.escape(note)}</figcaption>" if note else ""
    return (
        f'<figure><img alt="{html.escape(path.name)}" src="data:image/png;base64,{data}">{caption}</figure>'
    )


def _num(value: float) -> str:
    return f"{value:.0f}" if float(value).is_integer() else f"{value:.3f}"


SEED_SUMMARY_INLINE = 6  # more numbers than this fold into a <details> block


def _seed_summary(claim: Claim) -> str:
    """Mean [min–max] over seeds of each number a multi-seed claim's verdict used (HTML, may be empty)."""
    summary = claim.values.get("summary") if "per_seed" in claim.values else None
    if not summary:
        return ""
    n = len(claim.values["per_seed"])
    items = [
        f"{html.escape(key)} {_num(s['mean'])} [{_num(s['min'])}–{_num(s['max'])}]"
        for key, s in summary.items()
    ]
    head = f"Over {n} seeds, mean [min–max]"
    if len(items) <= SEED_SUMMARY_INLINE:
        return f"<br><i>{head}:</i> " + "; ".join(items)
    return f"<details><summary>{head} of {len(items)} numbers</summary>{'; '.join(items)}</details>"


def _claims(claims: list[Claim], suite: str) -> str:
    rows = []
    for c in claims:
        css = c.verdict.replace(" ", "-")
        verdict = c.verdict + (" (smoke scale)" if suite == "smoke" and c.verdict != "not run" else "")
        cells = [html.escape(x) for x in (c.id, c.claim, c.paper, c.measured or "—", verdict)]
        cells[3] += _seed_summary(c)
        cells.append(", ".join(_evidence(e) for e in c.evidence))
        rows.append(f'<tr class="{css}">' + "".join(f"<td>{x}</td>" for x in cells) + "</tr>")
    head = "".join(f"<th>{h}</th>" for h in ("id", "claim", "paper", "measured", "verdict", "evidence"))
    return f'<div class="wide"><table><tr>{head}</tr>{"".join(rows)}</table></div>'


def write_report(path: Path, suite: str, sections: list[Section], claims: list[Claim], timing: dict) -> Path:
    now = datetime.datetime.now().strftime("%Y-%m-%d %H:%M")
    counts = {v: sum(c.verdict == v for c in claims) for v in VERDICTS}
    parts = [
        f"<!doctype html><html><head><meta charset='utf-8'><title>symgen report ({suite})</title>",
        f"<style>{STYLE}</style></head><body>",
        f"<h1>symgen reproduction — suite <code>{html.escape(suite)}</code></h1>",
        f"<p>Written {now} on {html.escape(platform.machine())}, torch {torch.__version__}, "
        f"{torch.get_num_threads()} CPU threads{', CUDA' if torch.cuda.is_available() else ''}. "
        f"Time taken: {timing['wall_seconds']:.0f} s wall clock for this invocation; "
        f"{timing['train_seconds_of_runs']:.0f} s of training summed over the suite's runs.</p>",
        f'<p class="scale">{html.escape(SCALE.get(suite, ""))}</p>',
        "<p>Claims: " + ", ".join(f"{n} {v}" for v, n in counts.items() if n) + ".</p>",
        "<h2>Claims</h2>",
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
