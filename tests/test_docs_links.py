"""The documents hold together: every relative link and #anchor resolves, and no source file cites a missing document.

Documents: README.md, CHANGELOG.md, benchmarks/RESULTS.md and docs/*.md. A relative link names a file or folder of the
repository, and its #anchor a heading of the target, as GitHub spells a heading's anchor; an anchor alone names a
heading of the same document. A source file (.py .js .toml .sh .css, and .ci/run) may cite a document by its path
(docs/settings.md) or as the README; the path must exist, from the repository's root or from the citing file's
folder (a bare name, as in `ROOT / "docs" / "library.md"`, must be some document's name), and a quoted section after it
('docs/models.md, "How attnviz checks itself against transformers"') must be one of that document's headings.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCE_SUFFIXES = (".py", ".js", ".toml", ".sh", ".css")
SOURCE_NAMES = (".ci/run",)

FENCE = re.compile(r"^\s*(```|~~~).*?^\s*\1[^\n]*$", re.M | re.S)  # fenced code: its text is no link
CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1", re.S)
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.+?)\s*#*\s*$", re.M)
EXTERNAL = re.compile(r"^[a-z][a-z0-9+.-]*:", re.I)  # http:, https:, mailto:
# a cited document: a path ending in .md, or the README by name; then, optionally, a quoted section of it
CITATION = re.compile(r"(?<![\w./-])((?:[\w.-]+/)*[\w.-]*\w\.md|README)(?![\w-])"
                      r"(?:(?:'s|,|:)\s*(?:section\s+)?\"([^\"\n]{1,100})\")?")


def without_code(markdown: str) -> str:
    """The text with fenced blocks and code spans blanked (a link or heading inside code is not one)."""
    return CODE_SPAN.sub(" ", FENCE.sub("", markdown))


def heading_text(raw: str) -> str:
    """A heading as read: its links' text kept, its markup dropped."""
    return re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", raw).replace("`", "").strip()


def anchors(markdown: str) -> set[str]:
    """The #anchors GitHub gives the document's headings: lower case, punctuation dropped, spaces to hyphens; a
    repeated heading gets -1, -2, ..."""
    seen: dict[str, int] = {}
    found = set()
    for _, raw in HEADING.findall(FENCE.sub("", markdown)):
        slug = re.sub(r"[^\w\- ]", "", heading_text(raw).lower()).replace(" ", "-")
        found.add(slug if slug not in seen else f"{slug}-{seen[slug]}")
        seen[slug] = seen.get(slug, 0) + 1
    return found


def headings(markdown: str) -> set[str]:
    return {heading_text(raw).lower() for _, raw in HEADING.findall(FENCE.sub("", markdown))}


def broken_links(document: Path, root: Path) -> list[str]:
    """Each relative link or anchor of `document` that leads nowhere, said with the document's name."""
    text = document.read_text(encoding="utf-8")
    problems = []
    for target in LINK.findall(without_code(text)):
        if EXTERNAL.match(target):
            continue
        path_part, _, anchor = target.partition("#")
        where = (document.parent / path_part).resolve() if path_part else document
        if root.resolve() not in (where, *where.parents):
            problems.append(f"{document.relative_to(root)}: {target} leads out of the repository")
        elif not where.exists():
            problems.append(f"{document.relative_to(root)}: {target}: no {path_part} here")
        elif anchor and (where.is_dir() or anchor not in anchors(where.read_text(encoding="utf-8"))):
            problems.append(f"{document.relative_to(root)}: {target}: no heading #{anchor} in {where.name}")
    return problems


def missing_citations(source: Path, root: Path, documents_by_name: dict[str, Path]) -> list[str]:
    """Each document `source` cites that the repository lacks (or a quoted section that document lacks).
    documents_by_name: the repository's .md files by file name, for a citation that is a bare name."""
    problems = []
    for line_number, line in enumerate(source.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
        for cited, section in CITATION.findall(line):
            name = "README.md" if cited == "README" else cited
            candidates = (root / name, source.parent / name) if "/" in name else (
                root / name, source.parent / name, documents_by_name.get(name, root / name))
            found = next((p for p in candidates if p.is_file()), None)
            where = f"{source.relative_to(root)}:{line_number}"
            if found is None:
                problems.append(f"{where} cites {cited}, which is not in the repository")
            elif section and section.lower() not in headings(found.read_text(encoding="utf-8")):
                problems.append(f"{where} cites the section \"{section}\" of {name}, which has no such heading")
    return problems


def documents(root: Path) -> list[Path]:
    return [root / "README.md", root / "CHANGELOG.md", root / "benchmarks" / "RESULTS.md",
            *sorted((root / "docs").glob("*.md"))]


def repository_files(root: Path) -> list[str]:
    """The repository's files: what git tracks or would (untracked but not ignored), by path from the root."""
    listed = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"], cwd=root,
                            capture_output=True, text=True, check=True).stdout.splitlines()
    return [name for name in listed if (root / name).is_file()]


def source_files(root: Path) -> list[Path]:
    """The source files that may cite a document. This test file is left out: the documents it cites are the
    made-up ones of its own failing case (test_the_checks_fail_on_a_broken_link_anchor_and_citation)."""
    return [root / name for name in repository_files(root)
            if (name.endswith(SOURCE_SUFFIXES) or name in SOURCE_NAMES) and root / name != Path(__file__).resolve()]


def test_every_document_the_guide_names_is_there():
    missing = [str(d.relative_to(ROOT)) for d in documents(ROOT) if not d.is_file()]
    assert not missing and len(documents(ROOT)) >= 8, missing


def test_every_relative_link_and_anchor_in_the_documents_resolves():
    problems = [p for document in documents(ROOT) for p in broken_links(document, ROOT)]
    assert not problems, "\n".join(problems)


def test_no_source_file_cites_a_missing_document():
    sources = source_files(ROOT)
    assert any(s.name == "tolerances.py" for s in sources)  # the listing found the repository's files
    by_name = {Path(name).name: ROOT / name for name in repository_files(ROOT) if name.endswith(".md")}
    problems = [p for source in sources for p in missing_citations(source, ROOT, by_name)]
    assert not problems, "\n".join(problems)


def test_ci_runs_exactly_the_readmes_test_command():
    """The README's two commands are its first two bash blocks; .ci/run's last line is the second, word for word."""
    blocks = re.findall(r"^```bash\n(.*?)^```", (ROOT / "README.md").read_text(encoding="utf-8"), re.M | re.S)
    run_app, run_tests = (block.strip() for block in blocks[:2])
    assert run_app == "pip install -r requirements.txt && streamlit run app.py"
    assert (ROOT / ".ci" / "run").read_text(encoding="utf-8").strip().splitlines()[-1] == run_tests


def test_the_checks_fail_on_a_broken_link_anchor_and_citation(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "guide.md").write_text("# The guide\n\n## Run it for a class\n\n## Run it for a class\n",
                                                encoding="utf-8")
    (tmp_path / "README.md").write_text(
        "# Title\n\n## Two commands\n\n"
        "[fine](docs/guide.md#run-it-for-a-class) [second heading](docs/guide.md#run-it-for-a-class-1) "
        "[here](#two-commands) [folder](docs/) [web](https://example.org/x.md)\n"
        "`[in code](docs/nowhere.md)`\n\n```\n[in a block](nowhere.md)\n```\n"
        "[missing file](docs/nowhere.md) [missing anchor](docs/guide.md#setup) [missing here](#three-commands)\n",
        encoding="utf-8")
    problems = broken_links(tmp_path / "README.md", tmp_path)
    assert len(problems) == 3, problems
    assert "docs/nowhere.md" in problems[0] and "#setup" in problems[1] and "#three-commands" in problems[2]

    cited = tmp_path / "module.py"
    missing_name = "DESIGN" + ".md"  # spelled in two parts, so this file cites no missing document itself
    cited.write_text(f'"""See {missing_name}, and docs/guide.md, section "Run it for a class".\n'
                     f'Also the README\'s "Two commands" and the README\'s "{"In" + " class"}"."""\n', encoding="utf-8")
    problems = missing_citations(cited, tmp_path, {"guide.md": tmp_path / "docs" / "guide.md"})
    assert len(problems) == 2, problems
    assert missing_name in problems[0] and "In class" in problems[1]
