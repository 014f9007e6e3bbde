"""The app the browser tests talk to: this service with the shipped sample corpus, the extractive
generator, and lexical-overlap filters standing in for the ONNX ones (so the tests need no model files).

``real_models=True`` uses the default multilingual embedder and the USE sentence encoder of the extractive
generator instead (slower; used to take the documentation screenshot)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from assistant_bridge.domain import Ownership
from assistant_bridge.generators import make_generator
from assistant_bridge.ingest import sample_corpus_files
from assistant_bridge.services import Services
from tests.conftest import make_services, make_settings
from tests.conversation.helpers import fake_runtime


def sample_app(
    tmp_path: Path, *, real_models: bool = False, extra_docs: Sequence[tuple[str, str]] = (), **settings_overrides: Any
) -> tuple[Any, Services]:
    from assistant_bridge.web.app import create_app

    if real_models:
        settings = make_settings(
            tmp_path,
            embedder={"kind": "e5-small"},
            backend={"kind": "memory", "default_mode": "hybrid"},
            **settings_overrides,
        )
        services = Services.from_settings(settings)
        generator = make_generator("extractive", embedder="use")
    else:
        settings = make_settings(tmp_path, backend={"kind": "memory", "default_mode": "hybrid"}, **settings_overrides)
        services = make_services(settings)
        generator = make_generator("extractive", embedder="none")
    fake_runtime(services, pre=None, post=None, generator=generator, thresholds=(0.5, 0.3))
    services.warm_up()
    for path in sample_corpus_files():
        services.ingestor.ingest_bytes(path.name, path.read_bytes(), Ownership())
    for title, text in extra_docs:
        services.ingestor.ingest_text(text, title=title, ownership=Ownership())
    app = create_app(settings, services)
    return app, services
