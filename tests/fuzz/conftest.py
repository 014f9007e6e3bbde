"""An app for the fuzzer: the memory backend and hashing embedder, the real conversation components
(extractive generator, ONNX answer filters), credentials with an admin key, and a few documents."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.conftest import KEYS, make_services, make_settings

ADMIN_HEADERS = {"X-API-Key": "key-admin-0001"}
DOCS = [
    (
        "Reset your password",
        "To reset your password open the self-service portal and choose Forgot password. "
        "A verification code is sent to your phone by SMS.",
    ),
    ("Expense reports", "Submit expense reports within 30 days. Attach every receipt in the finance tool."),
    ("Congés", "Les demandes de congés se font dans l'outil RH au moins deux semaines avant le départ."),
]


@pytest.fixture(scope="session")
def fuzz_app(tmp_path_factory: Any) -> Any:
    from assistant_bridge.web.app import create_app

    settings = make_settings(Path(tmp_path_factory.mktemp("fuzz")), auth={"keys": KEYS})
    app = create_app(settings, make_services(settings))
    with app.test_client() as client:
        for title, text in DOCS:
            resp = client.post(
                "/v1/documents", json={"title": title, "text": text, "visibility": "public"}, headers=ADMIN_HEADERS
            )
            assert resp.status_code == 201, resp.get_data(as_text=True)
    return app
