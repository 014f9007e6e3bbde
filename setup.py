"""Build step of the package (everything else is declared in ``pyproject.toml``).

The filter models work the same way: the files the service loads from the repository's ``filters_models/``
(:data:`MODEL_FILES`, the same list as ``assistant_bridge.filters.onnx_filters.MODEL_FILES``) are copied into
the built package as ``assistant_bridge/filters_models/``, where ``default_model_dir()`` looks after
``ASSISTANT_BRIDGE_FILTERS_DIR``. Training scripts, metrics and model cards stay in the repository.

The JSON Schemas and the OpenAPI base document live once, in the repository's ``schemas/`` folder, which the
tests and the docs use. ``build_py`` copies every file of that folder into the built package as
``assistant_bridge/schemas/``, so that a wheel or a non-editable install validates requests without
``ASSISTANT_BRIDGE_SCHEMA_DIR`` (``assistant_bridge.validation`` looks there first). A source checkout
or an editable install has no such copy and reads ``schemas/`` directly. ``MANIFEST.in`` puts ``schemas/``
in the source distribution, so that a wheel built from it gets the copy too.
"""

from __future__ import annotations

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

SOURCE = Path(__file__).resolve().parent / "schemas"
PACKAGED = Path("assistant_bridge") / "schemas"
MODELS_SOURCE = Path(__file__).resolve().parent / "filters_models"
MODELS_PACKAGED = Path("assistant_bridge") / "filters_models"
MODEL_FILES = ("pre_filter.onnx", "post_filter.onnx", "pre_cross.onnx", "pre_cross_tokenizer.json", "thresholds.json")


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
        missing = [name for name in MODEL_FILES if not (MODELS_SOURCE / name).is_file()]
        if missing:
            raise FileNotFoundError(f"filter model files missing from {MODELS_SOURCE}: {', '.join(missing)}")
        models = Path(self.build_lib) / MODELS_PACKAGED
        self.mkpath(str(models))
        for name in MODEL_FILES:
            self.copy_file(str(MODELS_SOURCE / name), str(models / name))


setup(cmdclass={"build_py": BuildWithSchemas})
