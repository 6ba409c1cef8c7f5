"""The build step setuptools cannot be told in ``pyproject.toml``: the recipes live at the top
of the repository (``notebooks/``), and the wheel carries them inside the package, as
``explorer/recipes/``, where ``explorer lab`` copies them from (``explorer/cli/recipes.py``),
with the pages they link to beside them (``notebooks/realism.md`` links ``docs/realism.md``;
the copy is the page itself) and the files they read (``notebooks/data/``, recipe 7's chat
logs). Everything else about the build is in ``pyproject.toml``."""

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

NOTEBOOKS = Path(__file__).resolve().parent / "notebooks"
#: The files the recipes read, beside them (not what they write: ``captures/``).
DATA = NOTEBOOKS / "data"


class BuildWithRecipes(build_py):
    """build_py, then the recipes and their data copied into the built package (not for an
    editable install, which reads them from ``notebooks/`` where they are)."""

    def run(self) -> None:
        super().run()
        if self.editable_mode:
            return
        target = Path(self.build_lib) / "explorer" / "recipes"
        recipes = [path for path in NOTEBOOKS.glob("*") if path.suffix in (".ipynb", ".md")]
        data = [path for path in DATA.rglob("*") if path.is_file()]
        for path in sorted(recipes + data):
            destination = target / path.relative_to(NOTEBOOKS)
            self.mkpath(str(destination.parent))
            self.copy_file(str(path.resolve()), str(destination))


setup(cmdclass={"build_py": BuildWithRecipes})
