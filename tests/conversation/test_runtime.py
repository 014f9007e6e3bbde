"""The /message runtime: no model for a turn without results, model failures reported at start-up without
file paths, the shared encoder's thread setting."""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

import pytest

from assistant_bridge.conversation.runtime import MessageSettings, public_error
from assistant_bridge.errors import ConfigurationError, ModelLoadError
from assistant_bridge.filters import default_model_dir
from assistant_bridge.filters.encoder import UseEncoder
from assistant_bridge.logs import JsonFormatter
from tests.conftest import make_settings
from tests.conversation.helpers import ask, build, checked, ingest, only_item

pytestmark = pytest.mark.unit


def broken_model_dir(tmp_path: Path, corrupt: bool = False) -> Path:
    """A filters directory with the thresholds file but a missing (or corrupt) pre-filter model."""
    d = tmp_path / "secret-location" / "models"
    d.mkdir(parents=True)
    shutil.copy(default_model_dir() / "thresholds.json", d / "thresholds.json")
    shutil.copy(default_model_dir() / "post_filter.onnx", d / "post_filter.onnx")
    if corrupt:
        (d / "pre_filter.onnx").write_bytes(b"not an onnx file")
    return d


def test_a_turn_without_results_loads_no_model(tmp_path: Path) -> None:
    app, _, runtime = build(tmp_path, real=True)  # real ONNX filters and USE encoder, loaded on first use
    body = checked(ask(app.test_client(), "How do I reset my password?"))  # nothing is indexed
    assert only_item(body)["response_type"] == "text"
    assert runtime._filters is None and not runtime._warm  # neither the filters nor the encoder were loaded


@pytest.mark.parametrize("corrupt", [False, True])
def test_a_broken_model_answers_without_the_path_and_makes_readyz_false(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, corrupt: bool
) -> None:
    models = broken_model_dir(tmp_path, corrupt)
    app, services, runtime = build(tmp_path, real=True, message={"filters_dir": str(models)})
    runtime.preload = lambda: True  # as in a served worker: gunicorn's post_worker_init warms up
    with caplog.at_level(logging.ERROR):
        services.warm_up()  # logs, does not raise: the other routes keep working
    assert any(str(models) in JsonFormatter().format(r) for r in caplog.records)  # the log has the path
    client = app.test_client()

    ready = client.get("/readyz")
    assert ready.status_code == 503
    reason = ready.get_json()["reason"]
    assert "pre_filter.onnx" in reason and "secret-location" not in reason

    no_results = checked(ask(client, "anything at all"))  # a turn without results still works
    assert only_item(no_results)["response_type"] == "text"

    ingest(client)
    resp = client.post("/v1/search", json={"query": "password"})
    assert resp.status_code == 200  # the rest of the service keeps working
    failed = ask(client, "How do I reset my password?")
    assert failed.status_code == 503
    error = failed.get_json()["error"]
    assert error["code"] == "model_load_error" and "pre_filter.onnx" in error["message"]
    assert "secret-location" not in failed.get_data(as_text=True) and "details" not in error


def test_public_error_drops_details_and_paths() -> None:
    exc = ModelLoadError("could not load: [Errno 2] No such file: '/opt/x/models/w.npz'", path="/opt/x/models")
    public = public_error(exc)
    assert public.details == {} and "/opt" not in public.message and "<path>" in public.message


def test_encoder_threads_setting(tmp_path: Path) -> None:
    assert MessageSettings.from_settings(make_settings(tmp_path)).encoder_threads == 1
    two = make_settings(tmp_path, message={"encoder_threads": 2})
    assert MessageSettings.from_settings(two).encoder_threads == 2
    for bad in (0, "many"):
        with pytest.raises(ConfigurationError):
            MessageSettings.from_settings(make_settings(tmp_path, message={"encoder_threads": bad}))
    assert UseEncoder()._threads == 1  # the filters' encoder defaults to one thread too
