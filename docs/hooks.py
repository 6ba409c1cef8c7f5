"""MkDocs hooks of the documentation site (``mkdocs.yml``): the pages that live outside
``docs/`` or are generated, and links that work both on GitHub and on the site.

- The README is the home page, ``SECURITY.md`` the security page, the recipes of
  ``notebooks/`` are rendered (not executed) under the same path, and
  ``reference.md`` holds one mkdocstrings entry per public name of the toolkit (what
  ``explorer.__all__`` lists, read without importing it) and the error tree.
- Pages named in the navigation but absent (``realism.md`` before it is written) are left out
  of it, pages of ``docs/`` it does not name are added at its end, and the recipes section
  lists the recipes there are.
- The docstrings' Sphinx roles (``:class:`~explorer.chat.Chat```) show as code, linked to
  the reference entry when they name a public name.
- A link in a page is resolved against the page's place in the repository: a file that is on
  the site becomes a link to its page; any other file of the repository becomes its path in
  code (the site does not serve source files); a target that does not exist is a warning,
  which the strict build turns into a failure.
"""

from __future__ import annotations

import ast
import logging
import os
import re
from pathlib import Path
from typing import Any

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.plugins import event_priority
from mkdocs.structure.files import File, Files
from mkdocs.structure.pages import Page

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
RECIPES = ROOT / "notebooks"
#: Where the recipes are on the site: where they are in the repository.
SITE_RECIPES = "notebooks/"
#: Site pages whose source is a file of the repository outside docs/.
OUTSIDE = {"index.md": ROOT / "README.md", "security.md": ROOT / "SECURITY.md"}
#: The generated API reference.
REFERENCE = "reference.md"
#: A Markdown link or image: [text](target) or ![alt](target).
LINK = re.compile(r"(!?)\[([^\]\n]*)\]\(([^)\s]+)\)")
#: A Sphinx role in a docstring as Markdown renders it: :class:<code>~explorer.chat.Chat</code>.
ROLE = re.compile(r":(?:class|func|meth|mod|attr|data|exc|obj):<code>(~?)([^<]+)</code>")

log = logging.getLogger("mkdocs.plugins.explorer")


def public_names() -> list[str]:
    """``explorer.__all__``, read from ``explorer/__init__.py`` without importing it."""
    tree = ast.parse((ROOT / "explorer" / "__init__.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
        ):
            return [str(name) for name in ast.literal_eval(node.value)]
    raise ValueError("explorer/__init__.py has no __all__")


def reference_page() -> str:
    """The API reference: every public name, then the error tree."""
    entries = "\n\n".join(f"::: explorer.{name}" for name in public_names())
    return (
        "# API reference\n\n"
        "Every public name of the toolkit (`explorer.__all__`), generated from the docstrings, "
        "then the errors it raises (`explorer.errors`).\n\n"
        f"{entries}\n\n::: explorer.errors\n"
    )


def _site_pages() -> dict[Path, str]:
    """Repository files that are pages (or files) of the site, and their site path."""
    pages = {path.resolve(): path.relative_to(DOCS).as_posix() for path in DOCS.rglob("*")}
    pages.update({source.resolve(): uri for uri, source in OUTSIDE.items()})
    pages.update({nb.resolve(): f"{SITE_RECIPES}{nb.name}" for nb in RECIPES.glob("*.ipynb")})
    return pages


def _source(uri: str) -> Path:
    """The repository file a site path comes from."""
    if uri in OUTSIDE:
        return OUTSIDE[uri]
    if uri.startswith(SITE_RECIPES):
        return RECIPES / uri.removeprefix(SITE_RECIPES)
    return DOCS / uri


def _exists(entry: Any, docs: Path, generated: set[str]) -> bool:
    """Whether a navigation entry (a path, or a titled path) names a page there is."""
    value = next(iter(entry.values())) if isinstance(entry, dict) else entry
    if not isinstance(value, str) or "://" in value:
        return True
    return value in generated or (docs / value).exists()


def _prune(nav: list[Any], docs: Path, generated: set[str]) -> list[Any]:
    """``nav`` without the pages that do not exist, the recipes section filled in."""
    kept: list[Any] = []
    for entry in nav:
        if isinstance(entry, dict) and isinstance(next(iter(entry.values())), list):
            title, children = next(iter(entry.items()))
            if title == "Recipes":
                children = [f"{SITE_RECIPES}{nb.name}" for nb in sorted(RECIPES.glob("*.ipynb"))]
            kept.append({title: _prune(children, docs, generated)})
        elif _exists(entry, docs, generated):
            kept.append(entry)
    return kept


def _listed(nav: list[Any]) -> set[str]:
    """The page paths a navigation names."""
    found: set[str] = set()
    for entry in nav:
        value = next(iter(entry.values())) if isinstance(entry, dict) else entry
        found.update(_listed(value) if isinstance(value, list) else {value})
    return found


def on_config(config: MkDocsConfig) -> MkDocsConfig:
    """Fill in the recipes, leave out pages that are not there yet, and add at the end the
    pages of docs/ the navigation does not name (a page added without touching mkdocs.yml
    is still on the site)."""
    docs = Path(config["docs_dir"])
    generated = {*OUTSIDE, REFERENCE}
    generated.update(f"{SITE_RECIPES}{nb.name}" for nb in RECIPES.glob("*.ipynb"))
    nav = _prune(config["nav"], docs, generated)
    listed = _listed(nav)
    nav += [page.name for page in sorted(docs.glob("*.md")) if page.name not in listed]
    config["nav"] = nav
    return config


@event_priority(100)  # before mkdocs-jupyter's, which makes pages of the notebooks it sees
def on_files(files: Files, config: MkDocsConfig) -> Files:
    """Add the pages from outside docs/ and the generated reference."""
    for uri, source in OUTSIDE.items():
        files.append(File.generated(config, uri, abs_src_path=str(source)))
    for notebook in sorted(RECIPES.glob("*.ipynb")):
        # A plain file under the repository (mkdocs-jupyter wraps plain files only).
        uri = f"{SITE_RECIPES}{notebook.name}"
        files.append(File(uri, str(ROOT), config["site_dir"], config["use_directory_urls"]))
    # Its source is where the public names are listed; on_page_read_source writes it. (A
    # file given as content would not survive mkdocs-jupyter's handling of the files.)
    init = ROOT / "explorer" / "__init__.py"
    files.append(File.generated(config, REFERENCE, abs_src_path=str(init)))
    return files


def on_page_read_source(page: Page, config: MkDocsConfig) -> str | None:
    """The generated reference's Markdown; None (read the file) for every other page."""
    return reference_page() if page.file.src_uri == REFERENCE else None


def on_page_markdown(markdown: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    """Links resolved against the page's place in the repository (see the module docstring)."""
    uri = page.file.src_uri
    if uri == REFERENCE:
        return markdown
    folder = _source(uri).parent
    pages = _site_pages()
    here = os.path.dirname(uri)

    def fix(match: re.Match[str]) -> str:
        bang, text, target = match.groups()
        if re.match(r"[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
            return match.group(0)
        path, _, anchor = target.partition("#")
        resolved = (folder / path).resolve()
        if resolved in pages:
            relative = os.path.relpath(pages[resolved], here or ".")
            return f"{bang}[{text}]({relative}{'#' + anchor if anchor else ''})"
        if not resolved.exists():
            log.warning("%s links to %s, which does not exist", uri, target)
            return match.group(0)
        name = resolved.relative_to(ROOT).as_posix()
        return f"`{name}`" if text.strip("`") == name else f"{text} (`{name}`)"

    return LINK.sub(fix, markdown)


def on_page_content(html: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    """The reference's Sphinx roles as code, linked where they name a public name."""
    if page.file.src_uri != REFERENCE:
        return html
    public = set(public_names())

    def fix(match: re.Match[str]) -> str:
        short, target = match.groups()
        name = target.rpartition(".")[2]
        code = f"<code>{name if short else target}</code>"
        if target.startswith("explorer.") and name in public:
            return f'<a href="#explorer.{name}">{code}</a>'
        return code

    return ROLE.sub(fix, html)
