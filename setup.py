"""Build step of the package (everything else is declared in ``pyproject.toml``).

The JSON Schemas and the OpenAPI base document live once, in the repository's ``schemas/`` folder, which the
tests and the docs use. ``build_py`` copies every file of that folder into the built package as
``assistant_bridge/schemas/``, so that a wheel or a non-editable install validates requests without
``ASSISTANT_BRIDGE_SCHEMA_DIR`` (``assistant_bridge.web.validation`` looks there first). A source checkout
or an editable install has no such copy and reads ``schemas/`` directly. ``MANIFEST.in`` puts ``schemas/``
in the source distribution, so that a wheel built from it gets the copy too.
"""

from __future__ import annotations

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

SOURCE = Path(__file__).resolve().parent / "schemas"
PACKAGED = Path("assistant_bridge") / "schemas"


class BuildWithSchemas(build_py):
    def run(self) -> None:
        super().run()
        if self.editable_mode:  # an editable install reads the repository's schemas/ in place
            return
        files = sorted(p for p in SOURCE.iterdir() if p.is_file())
        if not any(p.name.endswith(".schema.json") for p in files):
            raise FileNotFoundError(f"no JSON Schema in {SOURCE}: the package would not validate requests")
        target = Path(self.build_lib) / PACKAGED
        self.mkpath(str(target))
        for path in files:
            self.copy_file(str(path), str(target / path.name))


setup(cmdclass={"build_py": BuildWithSchemas})
