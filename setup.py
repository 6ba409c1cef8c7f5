"""The build step setuptools cannot be told in ``pyproject.toml``: the recipes live at the top
of the repository (``notebooks/``), and the wheel carries them inside the package, as
``explorer/recipes/``, where ``explorer lab`` copies them from (``explorer/cli/recipes.py``),
with the pages they link to beside them (``notebooks/realism.md`` links ``docs/realism.md``;
the copy is the page itself). Everything else about the build is in ``pyproject.toml``."""

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

NOTEBOOKS = Path(__file__).resolve().parent / "notebooks"


class BuildWithRecipes(build_py):
    """build_py, then the recipes copied into the built package (not for an editable
    install, which reads them from ``notebooks/`` where they are)."""

    def run(self) -> None:
        super().run()
        if self.editable_mode:
            return
        target = Path(self.build_lib) / "explorer" / "recipes"
        self.mkpath(str(target))
        for path in sorted(NOTEBOOKS.glob("*")):
            if path.suffix in (".ipynb", ".md"):
                self.copy_file(str(path.resolve()), str(target / path.name))


setup(cmdclass={"build_py": BuildWithRecipes})
