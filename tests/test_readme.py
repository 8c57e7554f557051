"""The README cites both papers, points at the committed results, and names no file the repository
lacks."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def test_the_readme_cites_both_papers_by_title_and_arxiv_id():
    assert '"To See the Unseen", [arXiv 2604.21632](https://arxiv.org/abs/2604.21632)' in README
    assert '"Loop, Think, & Generalize", [arXiv 2604.07822](https://arxiv.org/abs/2604.07822)' in README


def test_the_first_commands_are_the_quick_reproduction_the_tests_then_the_smoke_taste():
    blocks = re.findall(r"```bash\n(.*?)```", README, re.S)
    assert "symgen reproduce --suite quick --jobs 2 --out repro" in blocks[0] and "pytest" in blocks[0]
    assert blocks[1].strip() == ".venv/bin/symgen reproduce --suite smoke --out smoke"


def test_every_link_and_file_the_readme_names_exists():
    links = re.findall(r"\]\(((?!https?:|#)[^)]+)\)", README)
    assert "docs/results/report.html" in links and "docs/results/README.md" in links
    missing = [link for link in links if not (ROOT / link).exists()]
    assert not missing, missing
    named = set(re.findall(r"`((?:src|docs|scripts|tests)/[\w./-]+)`", README))
    assert not [path for path in named if not (ROOT / path).exists()]
    assert "SPEC" not in README  # a specification the repository does not hold
