"""One self-contained HTML page. Its first screen says what reproduced, per source (paper A as
published, symgen's same-symbol variant, paper B, part C): a count per source, then one line per
claim (verdict, seeds, the measured headline beside the paper's value) with its parts and per-seed
numbers one click below. Then the provenance table (every command and commit, once), how a verdict
is reached, and one section per experiment with its figures embedded as base64 PNG. Every link is
relative to the page's own folder."""

from __future__ import annotations

import base64
import html
import json
import platform
import re
from pathlib import Path

import torch

from symgen.analysis.plots import SHOWN_PX
from symgen.experiments.claims import NOT_JUDGED, VERDICT_LEGEND, VERDICTS, ClaimResult, JudgedPart
from symgen.experiments.types import Link, Section, Table

STYLE = """
body{font-family:system-ui,sans-serif;max-width:1300px;margin:2em auto;padding:0 1em;color:#222;
line-height:1.4;overflow-wrap:break-word}
h1{font-size:1.6em;margin-bottom:.3em} h2{margin-top:1.6em;border-bottom:1px solid #ddd}
code{overflow-wrap:anywhere}
.meta{color:#444;font-size:14px}
.wide{max-width:100%;overflow-x:auto}
table{border-collapse:collapse;margin:1em 0;font-size:13px}
td,th{border:1px solid #ccc;padding:3px 6px;text-align:left;vertical-align:top;overflow-wrap:break-word}
td:first-child{white-space:nowrap}
table.provenance td:nth-child(2){min-width:18em;font-family:monospace;font-size:12px;overflow-wrap:anywhere}
table.provenance td:nth-child(3){white-space:nowrap}
th{background:#f3f3f3;font-weight:600} .reproduced{background:#dff5df} .not-reproduced{background:#fbe0e0}
.partly-reproduced{background:#fdf3d7}
.not-run,.not-judged{color:#888}
.summary{background:#f6f8fa;border:1px solid #d8dee4;border-radius:6px;padding:.4em 1em;margin:1em 0}
.summary p{margin:.4em 0} ul.tally{margin:.3em 0;padding-left:1.2em} ul.tally li{margin:.15em 0}
.intro{color:#444;font-size:14px;margin:.3em 0 .6em}
details.claim{border:1px solid #ddd;border-left:6px solid #bbb;border-radius:4px;margin:.35em 0}
details.claim.reproduced{border-left-color:#3a9a3a} details.claim.partly-reproduced{border-left-color:#d9a400}
details.claim.not-reproduced{border-left-color:#c33} details.claim.not-judged{border-left-color:#aaa}
details.claim.not-run{border-left-color:#ddd}
details.claim>summary{display:flex;flex-wrap:wrap;gap:.2em .8em;align-items:baseline;cursor:pointer;
padding:.35em .6em;list-style:none}
details.claim>summary::-webkit-details-marker{display:none}
details.claim>summary::before{content:"▸";color:#888;width:.8em}
details.claim[open]>summary::before{content:"▾"}
.cid{font-weight:700;flex:0 0 6.5em} .seeds{color:#555;font-size:13px;flex:0 0 7.5em}
.verdict{font-size:13px;font-weight:600;padding:1px 6px;border-radius:3px;flex:0 0 auto;min-width:10.5em;
text-align:center;white-space:nowrap}
.verdict.reproduced{background:#c9eec9} .verdict.partly-reproduced{background:#fae7b0}
.verdict.not-reproduced{background:#f6c6c6}
.verdict.not-judged,.verdict.not-run{background:#e8e8e8;color:#555}
.line{flex:1 1 24em;min-width:0} .sentence{display:block}
.ours,.paper{display:inline-block;font-size:13px;color:#333;margin-right:1.2em}
.ours{font-family:monospace;font-size:12px} .paper{color:#555}
details.claim .body{padding:.2em .8em .6em 1.6em;border-top:1px solid #eee;font-size:14px}
ul.parts{margin:.3em 0;padding-left:1.1em} ul.parts ul{margin:0;padding-left:1.1em;color:#444}
.outcome{font-weight:600;padding:0 3px;border-radius:3px} .outcome.pass{background:#c9eec9}
.outcome.fail{background:#f6c6c6} .outcome.mixed{background:#fae7b0} .outcome.not-judged{background:#e4e4e4}
table.legend td{font-size:13px} img{max-width:100%;border:1px solid #eee;margin:.5em 0}
figure{display:inline-block;width:49%;min-width:min(SHOWN_PXpx,100%);margin:0;vertical-align:top}
p.caption{color:#555;font-size:13px;margin:1em 0 -.6em}
figcaption{color:#333;font-size:13px;font-weight:600}
.scale{background:#fff7dd;border:1px solid #e8d9a0;padding:.6em 1em}
""".replace("SHOWN_PX", str(SHOWN_PX))  # two figures to a row where each is shown SHOWN_PX wide, else one
SOURCES = (
    (
        "paper-a",
        "Paper A as published",
        "Claims A7.1–A7.7 of “To See the Unseen” (arXiv 2604.21632), with the paper's own models; "
        "a “(mid)” row is the same claim at mid scale.",
    ),
    (
        "same-symbol",
        "symgen's same-symbol variant",
        "Paper A's claims with symgen's same-symbol term (β) on the symbols' rows, which the paper "
        "does not have; a “(mid)” row is the same claim at mid scale.",
    ),
    (
        "matching-head",
        "Paper A's models, trained with a matching head",
        "Paper A's claims judged on the paper's own models trained with a supervised matching head "
        "(train.match_loss: one head per block taught to attend to the earlier copies of each symbol, "
        "until step 4000), which the paper does not use.",
    ),
    (
        "scaffold-head",
        "Paper A's models, trained with a faded scaffold and a matching head",
        "Paper A's claims judged on the paper's own models, trained with symgen's same-symbol term as a "
        "scaffold that fades to zero by step 6000 and a matching head taught for the whole run; from "
        "step 6000 the model is the paper's architecture, its training is not the paper's.",
    ),
    ("paper-b", "Paper B", "Claims B5.1–B5.6 of “Loop, Think, &amp; Generalize” (arXiv 2604.07822)."),
    (
        "part-c",
        "Part C (beyond the papers)",
        "symgen's own questions, stated before they were measured: looped models on Horn problems "
        "without a chain of thought.",
    ),
    ("other", "Other claims", ""),
)
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


def _table(table: Table, css: str = "") -> str:
    head = "".join(f"<th>{html.escape(str(h))}</th>" for h in table.headers)
    rows = "".join("<tr>" + "".join(f"<td>{_cell(c)}</td>" for c in row) + "</tr>" for row in table.rows)
    # the caption stands above the table's scrolling box, where a wide table cannot hide its end
    caption = f'<p class="caption">{html.escape(table.caption)}</p>' if table.caption else ""
    klass = f' class="{css}"' if css else ""
    return f'{caption}<div class="wide"><table{klass}><tr>{head}</tr>{rows}</table></div>'


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


def _seed_text(seeds: list[int] | list[str]) -> str:
    """Seeds as ranges: 0–2, 4–6; 0, 2."""
    nums, runs = sorted({int(s) for s in seeds}), []
    for n in nums:
        if runs and n == runs[-1][1] + 1:
            runs[-1][1] = n
        else:
            runs.append([n, n])
    return ", ".join(str(a) if a == b else f"{a}, {b}" if b == a + 1 else f"{a}–{b}" for a, b in runs)


def _seeds_named(seeds: list[int]) -> str:
    """'seed 0' or 'seeds 0–2'."""
    return f"seed{'s' if len(seeds) != 1 else ''} {_seed_text(seeds)}"


def judged_seeds(claim: ClaimResult) -> list[int]:
    """The seeds on which some part of the claim was judged (passed or failed)."""
    return sorted({int(s) for p in claim.parts for s, o in p.outcomes.items() if o != NOT_JUDGED and s})


def source_of(claim_id: str) -> str:
    """Which of the report's sources a claim belongs to (SOURCES' keys)."""
    if "β" in claim_id:
        return "same-symbol"
    if "μ" in claim_id:
        return "matching-head"
    if "σ" in claim_id:
        return "scaffold-head"
    return {"A": "paper-a", "B": "paper-b", "C": "part-c"}.get(claim_id[:1], "other")


NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:e-?\d+)?")


def headline(claim: ClaimResult, limit: int = 140) -> str:
    """The first part's measurement over seeds, in one line: where every seed's text has the same words
    and at most two of its numbers differ, they read a / b / c (in seed order); otherwise each seed's
    text after its seed. Shortened to `limit` characters."""
    if not claim.parts:
        return ""
    measured = {s: m.split("; learned: ")[0] for s, m in claim.parts[0].measured.items() if m}
    texts = list(measured.values())
    if not texts:
        return ""
    templates = {NUMBER.sub("#", t) for t in texts}
    columns = list(zip(*(NUMBER.findall(t) for t in texts), strict=True)) if len(templates) == 1 else []
    if len(set(texts)) == 1:
        text = texts[0]
    elif columns and sum(len(set(col)) > 1 for col in columns) <= 2:
        pieces = templates.pop().split("#")
        text = pieces[0] + "".join(
            (col[0] if len(set(col)) == 1 else " / ".join(col)) + piece
            for col, piece in zip(columns, pieces[1:], strict=True)
        )
    else:
        text = "; ".join(f"seed {s}: {t}" for s, t in measured.items())
    if len(text) <= limit:
        return text
    return text[: text.rfind(" ", 0, limit - 1)].rstrip(",;:( ") + " …"


def _slug(text: str) -> str:
    latin = text.translate(str.maketrans({"β": "b", "μ": "m", "σ": "s"}))
    return "claim-" + re.sub(r"[^A-Za-z0-9]+", "-", latin).strip("-")


def _tally(claims: list[ClaimResult]) -> str:
    """Per source: how many claims reproduced, partly, not, not judged (and not run), and the seeds
    that judged them; each line links to its source's section."""
    lines = []
    for key, title, _ in SOURCES:
        group = [c for c in claims if source_of(c.id) == key]
        if not group:
            continue
        n = {v: sum(c.verdict == v for c in group) for v in VERDICTS}
        counts = (
            f"{n['reproduced']} reproduced, {n['partly reproduced']} partly, "
            f"{n['not reproduced']} not reproduced, {n['not judged']} not judged"
            + (f", {n['not run']} not run" if n["not run"] else "")
        )
        seeds = sorted({s for c in group for s in judged_seeds(c)})
        on = f" <small>(judged on {_seeds_named(seeds)})</small>" if seeds else ""
        lines.append(f'<li><a href="#{key}"><b>{html.escape(title, quote=False)}</b></a>: {counts}{on}</li>')
    return f'<ul class="tally">{"".join(lines)}</ul>'


def _claim(c: ClaimResult, suite: str) -> str:
    """One claim: a line (id, verdict, seeds, the measured headline beside the paper's value, the
    sentence), its parts and per-seed numbers one click below."""
    css = c.verdict.replace(" ", "-")
    verdict = c.verdict + (" (smoke scale)" if suite == "smoke" and c.verdict != "not run" else "")
    judged = judged_seeds(c)
    seeds = _seeds_named(c.seeds) if c.seeds else "no seed"
    if c.seeds and judged and judged != sorted(c.seeds):
        seeds += f" (judged on {_seed_text(judged)})"
    measured = headline(c)
    numbers = (f'<span class="ours">measured: {html.escape(measured)}</span>' if measured else "") + (
        f'<span class="paper">paper: {html.escape(c.paper)}</span>' if c.paper else ""
    )
    summary = (
        f'<summary><span class="cid">{html.escape(c.id)}</span>'
        f'<span class="verdict {css}">{html.escape(verdict)}</span>'
        f'<span class="seeds">{html.escape(seeds)}</span>'
        f'<span class="line"><span class="sentence">{html.escape(c.claim)}</span>{numbers}</span></summary>'
    )
    parts = '<ul class="parts">' + "".join(_part(p) for p in c.parts) + "</ul>" if c.parts else ""
    notes = "".join(
        f"<p><small>{'seed ' + html.escape(s) + ': ' if s else ''}{html.escape(n)}</small></p>"
        for s, n in c.notes.items()
    )
    evidence = (
        "<p><small>evidence: " + ", ".join(_evidence(e) for e in c.evidence) + "</small></p>"
        if c.evidence
        else ""
    )
    where = ""
    if c.source.get("part"):
        part = html.escape(str(c.source["part"]))
        where = (
            f'<p><small>judged by part <a href="{part}/report.html">{part}</a> '
            f'(its command and commit: <a href="#provenance">provenance</a>)</small></p>'
        )
    body = f'<div class="body">{parts}{notes}{evidence}{where}</div>'
    return f'<details class="claim {css}" id="{_slug(c.id)}">{summary}{body}</details>'


def _claims(claims: list[ClaimResult], suite: str) -> str:
    """One section per source, one line per claim."""
    out = []
    for key, title, intro in SOURCES:
        group = [c for c in claims if source_of(c.id) == key]
        if group:
            out.append(f'<h2 id="{key}">{html.escape(title, quote=False)}</h2><p class="intro">{intro}</p>')
            out.append('<div class="claims">' + "".join(_claim(c, suite) for c in group) + "</div>")
    return "".join(out)


def _provenance(header: dict, claims: list[ClaimResult], table: Table | None) -> str:
    """Where every number comes from: the command, commit and seeds of this output (one row), or of the
    book and each of its parts, with the claims each part judged."""
    if table is None:
        ids = ", ".join(c.id for c in claims if c.verdict != "not run")
        table = Table(
            ["output", "command", "commit", "seeds", "claims it reports"],
            [
                [
                    "this report",
                    header.get("command", ""),
                    header.get("commit", ""),
                    _seed_text(header.get("seeds", [])),
                    ids,
                ]
            ],
        )
    return f'<h2 id="provenance">Provenance</h2>{_table(table, "provenance")}'


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


def write_report(
    path: Path,
    header: dict,
    sections: list[Section],
    claims: list[ClaimResult],
    provenance: Table | None = None,
) -> Path:
    """The page: what reproduced, per source, on its first screen (one line per claim, its parts one
    click below), then where each number comes from (`provenance`: a book's parts; by default this
    output's command), how a verdict is reached, and every experiment's section."""
    suite, timing = header.get("suite", ""), header.get("timing", {})
    written, commit = (html.escape(str(header.get(k, ""))) for k in ("written", "commit"))
    judged = [judged_seeds(c) for c in claims]
    seeds = sorted({s for j in judged for s in j})
    on = (
        f"Claims judged on {_seeds_named(seeds)} (at most {max(map(len, judged))} per claim)"
        if seeds
        else "No claim was judged on any seed"
    )
    threads = torch.get_num_threads()
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'>",
        f"<title>symgen report ({html.escape(suite)})</title>",
        "<meta name='viewport' content='width=device-width, initial-scale=1'>",
        f"<style>{STYLE}</style></head><body>",
        f"<h1>symgen reproduction — suite <code>{html.escape(suite)}</code></h1>",
        f'<p class="meta">{on}. Written {written} at commit <code>{commit}</code> on '
        f"{html.escape(platform.machine())}, torch {torch.__version__}, {threads} CPU "
        f"thread{'s' if threads != 1 else ''}{', CUDA' if torch.cuda.is_available() else ''}; the "
        'commands: <a href="#provenance">provenance</a>.' + _time_taken(timing) + "</p>",
        '<div class="summary"><p><b>What reproduced</b> (click a claim for its parts and '
        "per-seed numbers):</p>" + _tally(claims) + "</div>",
        _selection(header),
        _scale_note(suite),
        _claims(claims, suite),
        _provenance(header, claims, provenance),
        '<h2 id="verdicts">How a verdict is reached</h2>',
        _legend(),
    ]
    for section in sections:
        parts.append(f"<h2>{html.escape(section.title)}</h2>")
        parts += [f"<p>{html.escape(p)}</p>" for p in section.paragraphs]
        parts += [_table(t) for t in section.tables]
        parts += [_figure(f, section.figure_notes.get(str(f), "")) for f in section.figures]
    parts.append("</body></html>")
    path.write_text("\n".join(parts))
    return path
