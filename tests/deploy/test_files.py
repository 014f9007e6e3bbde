"""Static checks of the deployment files (no container engine runs on the test machines).

* ``docker/compose.yaml`` is validated against the Compose Specification JSON Schema. The schema is vendored
  here as ``compose-spec.json`` (from the compose-spec project, Apache License 2.0, see
  ``LICENSE.compose-spec``; the copy shipped by check-jsonschema 0.39.0), then checked for what this
  deployment needs: pinned images, health checks, start order, no literal secrets.
* ``docker/Dockerfile`` is linted with a small set of rules: pinned base images, a non-root ``USER`` in the
  final stage, a ``HEALTHCHECK`` on ``/healthz``, no ``ADD`` of URLs, the filter models copied in from
  the repository (and present there), gunicorn started through ``assistant-bridge serve``.
* ``docker/config.example.toml`` loads with the real settings loader.
"""

from __future__ import annotations

import fnmatch
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from assistant_bridge.filters.onnx_filters import MODEL_FILES
from assistant_bridge.settings import load_settings

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[2]
DOCKER = ROOT / "docker"
HERE = Path(__file__).parent


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    return yaml.safe_load((DOCKER / "compose.yaml").read_text())


def _compose_errors(doc: Any) -> list[str]:
    schema = json.loads((HERE / "compose-spec.json").read_text())
    validator = jsonschema.Draft202012Validator(schema)
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(doc)]


# --------------------------------------------------------------------------------------------- compose


def test_compose_file_follows_the_compose_specification(compose: dict[str, Any]) -> None:
    assert _compose_errors(compose) == []


def test_the_schema_check_catches_mistakes(compose: dict[str, Any]) -> None:
    bad = json.loads(json.dumps(compose))
    bad["services"]["assistant-bridge"]["healthcheck"]["intervall"] = "10s"
    bad["services"]["milvus"]["depends_on"] = {"etcd": {"condition": "when_ready"}}
    errors = _compose_errors(bad)
    assert any("intervall" in e for e in errors) and any("when_ready" in e for e in errors)


def test_services_and_health_checks(compose: dict[str, Any]) -> None:
    services = compose["services"]
    assert set(services) == {"assistant-bridge", "elasticsearch", "etcd", "minio", "milvus"}
    for name, svc in services.items():
        assert svc.get("healthcheck", {}).get("test"), f"{name} has no health check"
    assert "/healthz" in " ".join(services["assistant-bridge"]["healthcheck"]["test"])
    assert services["elasticsearch"]["image"].split(":")[-1].startswith("8.")
    assert services["milvus"]["command"] == ["milvus", "run", "standalone"]
    for who, deps in (("assistant-bridge", ("elasticsearch", "milvus")), ("milvus", ("etcd", "minio"))):
        for dep in deps:
            assert services[who]["depends_on"][dep] == {"condition": "service_healthy"}


def test_images_are_pinned(compose: dict[str, Any]) -> None:
    for name, svc in compose["services"].items():
        image = svc["image"]
        tag = image.rsplit(":", 1)[-1] if ":" in image.rsplit("/", 1)[-1] else ""
        assert tag and tag != "latest" and re.search(r"\d", tag), f"{name}: unpinned image {image}"


def test_the_service_reaches_the_backends_by_name_and_secrets_come_from_the_environment(
    compose: dict[str, Any],
) -> None:
    env = compose["services"]["assistant-bridge"]["environment"]
    assert env["ASSISTANT_BRIDGE_BACKEND__ES_URL"] == "http://elasticsearch:9200"
    assert env["ASSISTANT_BRIDGE_BACKEND__URI"] == "http://milvus:19530"
    for svc in compose["services"].values():
        for key, value in (svc.get("environment") or {}).items():
            if re.search(r"PASSWORD|SECRET|AUTH__KEYS|API_KEY", key):
                assert re.fullmatch(r"\$\{[A-Z0-9_]+(:\?[^}]*|:-[^}]*)?\}", str(value)), f"{key} is a literal"
    assert "ports" not in compose["services"]["elasticsearch"]  # plain HTTP stays on the compose network


# ------------------------------------------------------------------------------------------ Dockerfile


def _instructions(text: str) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) pairs, with continuation lines joined and comments dropped."""
    out: list[tuple[str, str]] = []
    pending = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):  # Docker drops comment and blank lines, even inside a continuation
            continue
        continued = line.endswith("\\")
        pending = (pending + " " + (line[:-1] if continued else line)).strip()
        if not continued:
            word, _, rest = pending.partition(" ")
            out.append((word.upper(), rest.strip()))
            pending = ""
    return out


def lint_dockerfile(text: str, repo: Path = ROOT) -> list[str]:
    """Problems found by the rules in the module docstring (empty when the file passes)."""
    problems: list[str] = []
    ins = _instructions(text)
    stages: list[list[tuple[str, str]]] = []
    for word, rest in ins:
        if word == "FROM":
            stages.append([])
            image = rest.split()[0]
            if not (re.search(r":\d+\.\d+\.\d+[\w.\-]*$", image) or "@sha256:" in image):
                problems.append(f"base image {image} is not pinned to a patch release or digest")
        if stages:
            stages[-1].append((word, rest))
    if not stages:
        return ["no FROM instruction"]
    final = stages[-1]
    users = [rest.split(":")[0] for word, rest in final if word == "USER"]
    if not users or users[-1] in ("root", "0"):
        problems.append("the final stage does not switch to a non-root USER")
    health = [rest for word, rest in final if word == "HEALTHCHECK"]
    if not health or "/healthz" not in health[-1]:
        problems.append("no HEALTHCHECK on /healthz")
    for word, rest in ins:
        if word == "ADD" and re.search(r"\b(https?|ftp)://", rest):
            problems.append(f"ADD of a URL: {rest}")
    model_copies = [rest for word, rest in ins if word == "COPY" and "filters_models/" in rest]  # any stage
    if not model_copies:
        problems.append("the filter models (filters_models/) are not copied into the image")
    for rest in model_copies:
        sources = [s for s in shlex.split(rest)[:-1] if not s.startswith("--")]
        for src in sources:
            if not [p for p in repo.glob(src) if p.is_file()]:
                problems.append(f"COPY source {src} matches no file in the repository")
    copied = [s for rest in model_copies for s in shlex.split(rest)[:-1] if not s.startswith("--")]
    for name in MODEL_FILES:
        if not any(fnmatch.fnmatch(f"filters_models/{name}", s) for s in copied):
            problems.append(f"the filter model file {name} is not copied")
    cmd = [rest for word, rest in final if word in ("CMD", "ENTRYPOINT")]
    if not cmd or "assistant-bridge" not in cmd[-1] or "serve" not in cmd[-1]:
        problems.append("the image does not start `assistant-bridge serve`")
    return problems


def test_dockerfile_passes_the_lint() -> None:
    text = (DOCKER / "Dockerfile").read_text()
    assert lint_dockerfile(text) == []
    (base,) = {rest.split()[0] for word, rest in _instructions(text) if word == "FROM"}
    assert base.startswith("python:3.11.") and "slim" in base
    env = " ".join(rest for word, rest in _instructions(text) if word == "ENV")
    assert "ASSISTANT_BRIDGE_FILTERS_DIR" not in env  # the installed package carries the models


@pytest.mark.parametrize(
    "edit, problem",
    [
        (lambda t: t.replace("python:3.11.13-slim-bookworm", "python:3.11-slim"), "not pinned"),
        (lambda t: t.replace("USER 10001:10001", "USER root"), "non-root USER"),
        (
            lambda t: t.replace("HEALTHCHECK", "# HEALTHCHECK").replace('  CMD ["python"', '# CMD ["python"'),
            "HEALTHCHECK",
        ),
        (lambda t: t + "\nADD https://example.com/model.onnx /opt/\n", "ADD of a URL"),
        (lambda t: re.sub(r"COPY filters_models/.*\n", "", t), "filter models"),
        (lambda t: t.replace("filters_models/*.onnx", "filters_models/missing.onnx"), "matches no file"),
        (lambda t: t.replace(" filters_models/pre_cross_tokenizer.json", ""), "pre_cross_tokenizer.json is not copied"),
        (
            lambda t: t.replace('CMD ["assistant-bridge", "serve"]', 'CMD ["python", "app.py"]'),
            "assistant-bridge serve",
        ),
    ],
)
def test_the_lint_catches_each_rule(edit: Any, problem: str) -> None:
    broken = edit((DOCKER / "Dockerfile").read_text())
    assert any(problem in p for p in lint_dockerfile(broken)), lint_dockerfile(broken)


def _kept(path: str, patterns: list[str]) -> bool:
    """Whether a .dockerignore (``patterns``, in order, ``!`` to keep) keeps ``path`` in the build context."""
    kept = True
    for pattern in patterns:
        negated = pattern.startswith("!")
        glob = pattern.lstrip("!")
        if fnmatch.fnmatch(path, glob) or any(fnmatch.fnmatch(parent, glob) for parent in _parents(path)):
            kept = negated
    return kept


def _parents(path: str) -> list[str]:
    parts = path.split("/")
    return ["/".join(parts[:i]) for i in range(1, len(parts))]


def test_build_context_keeps_what_the_dockerfile_copies() -> None:
    ignore = [ln for ln in (DOCKER / "Dockerfile.dockerignore").read_text().split() if not ln.startswith("#")]
    sources = [
        src
        for word, rest in _instructions((DOCKER / "Dockerfile").read_text())
        if word == "COPY" and not rest.startswith("--from")
        for src in shlex.split(rest)[:-1]
    ]
    assert {"setup.py", "schemas", "assistant_bridge"} <= {s.rstrip("/") for s in sources}
    for src in sources:
        files = [
            f
            for p in ROOT.glob(src.rstrip("/"))
            for f in ([p] if p.is_file() else p.rglob("*"))
            if f.is_file() and "__pycache__" not in f.parts
        ]
        assert files, f"COPY source {src} matches no file"
        for f in files:
            assert _kept(f.relative_to(ROOT).as_posix(), ignore), f"{f.relative_to(ROOT)} is not in the build context"
    assert not _kept("tests/conftest.py", ignore) and not _kept("assistant_bridge/__pycache__/x.pyc", ignore)


# -------------------------------------------------------------------------------------------- settings


def test_example_config_loads_and_targets_the_compose_services() -> None:
    s = load_settings(DOCKER / "config.example.toml", env={})
    assert (s.backend.kind, s.backend.es_url, s.backend.uri) == (
        "elasticsearch",
        "http://elasticsearch:9200",
        "http://milvus:19530",
    )
    assert s.server.host == "0.0.0.0" and s.auth.keys == [] and s.auth.allow_anonymous is False
    assert s.data_dir == "/var/lib/assistant-bridge"
    assert s.backend.es_password is None and s.backend.es_api_key is None  # secrets only from the environment


def test_the_image_installs_the_package_with_its_schemas() -> None:
    """The build stage builds the package from ``setup.py`` and ``schemas/`` (copied into the package), and
    checks outside the source tree that the installed package finds them: no ``ASSISTANT_BRIDGE_SCHEMA_DIR``."""
    text = (ROOT / "docker" / "Dockerfile").read_text()
    build = _instructions(text.split("\nFROM ", 2)[1])
    assert ("COPY", "schemas ./schemas") in build
    install = next(rest for word, rest in build if word == "RUN" and "pip install ." in rest)
    assert "cd / &&" in install and "validator('search_request')" in install and "SCHEMA_DIR" in install
    assert "ASSISTANT_BRIDGE_SCHEMA_DIR" not in text and "ASSISTANT_BRIDGE_FILTERS_DIR" not in text
    assert "load_filters(d)" in install and "warm_up()" in install  # a broken model file fails the build


def _stage_build_context(dest: Path) -> None:
    """Lay out ``dest`` as the image's build stage lays out its WORKDIR: each ``COPY`` of the first stage,
    with only the files the build-context filter lets through."""
    text = (ROOT / "docker" / "Dockerfile").read_text()
    ignore = [ln for ln in (DOCKER / "Dockerfile.dockerignore").read_text().split() if not ln.startswith("#")]
    build = _instructions(text.split("\nFROM ", 2)[1])
    for word, rest in build:
        if word != "COPY" or rest.startswith("--"):
            continue
        *sources, target = shlex.split(rest)
        into = dest / target
        for src in sources:
            for path in sorted(ROOT.glob(src.rstrip("/"))):
                files = [path] if path.is_file() else sorted(f for f in path.rglob("*") if f.is_file())
                for f in files:
                    rel = f.relative_to(ROOT).as_posix()
                    if not _kept(rel, ignore):
                        continue
                    if path.is_dir():  # COPY dir target: the directory's contents land in target
                        out = into / f.relative_to(path)
                    elif target.endswith("/") or len(sources) > 1 or "*" in src:
                        out = into / f.name
                    else:
                        out = into
                    out.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copy2(f, out)


def test_the_build_stage_holds_what_the_package_build_needs(tmp_path: Path) -> None:
    """The package build (``setup.py build_py``, what ``pip install .`` runs) succeeds on the files the image's
    build stage copies, and the result carries the filter models: a ``COPY`` missing from the build stage
    fails here rather than in ``docker build``, which cannot run on this machine."""
    src, lib = tmp_path / "src", tmp_path / "lib"
    _stage_build_context(src)
    done = subprocess.run(
        [sys.executable, "setup.py", "-q", "build_py", "--build-lib", str(lib)],
        cwd=src,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "did not match any files" not in done.stderr, done.stderr[-2000:]  # e.g. LICENSE not copied
    packaged = lib / "assistant_bridge" / "filters_models"
    assert sorted(p.name for p in packaged.iterdir()) == sorted(MODEL_FILES)
    assert (lib / "assistant_bridge" / "schemas" / "search_request.schema.json").is_file()


def test_schema_dir_can_be_overridden(tmp_path: Path) -> None:
    import shutil
    import subprocess
    import sys

    shutil.copytree(ROOT / "schemas", tmp_path / "s")
    code = "from assistant_bridge import validation as v; print(v.SCHEMA_DIR); v.validate('search_request', {'query': 'x'})"
    out = subprocess.run(
        [sys.executable, "-c", code],
        env={"ASSISTANT_BRIDGE_SCHEMA_DIR": str(tmp_path / "s"), "PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.strip() == str(tmp_path / "s")
