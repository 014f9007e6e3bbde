"""An app for the multi-worker test: memory backend, fake generator and filters, the same small corpus in
every worker, and an ``X-Worker-PID`` header so the test knows which worker answered.

``gunicorn 'tests.tools.gunicorn_app:create()'`` with ``RAG_TEST_DATA_DIR`` set to a shared directory.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from assistant_bridge.domain import Ownership
from tests.conftest import make_services, make_settings
from tests.tools.helpers import SlowGenerator, components


def create() -> Any:
    from assistant_bridge.web.app import create_app

    data = Path(os.environ["RAG_TEST_DATA_DIR"])
    s = make_settings(data, tools={"poll_seconds": 0.05, "heartbeat_seconds": 0.5})
    svc = make_services(s)
    svc.register(components(SlowGenerator(delay=0.01, deltas=300)))
    # each worker has its own memory backend: give each its own copy of the corpus (a distinct owner makes a
    # distinct document id, so the shared metadata store does not mark the second copy as already ingested)
    for i, text in enumerate(["Employees may work remotely two days a week.", "Expense reports are due on the fifth."]):
        svc.ingestor.ingest_text(text, title=f"Doc {i}", ownership=Ownership(owner_user_id=f"worker-{os.getpid()}"))
    app = create_app(s, svc)

    @app.after_request
    def _pid(resp: Any) -> Any:
        resp.headers["X-Worker-PID"] = str(os.getpid())
        return resp

    return app
