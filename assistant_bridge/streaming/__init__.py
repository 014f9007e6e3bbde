"""Event streams, one place for every route: SSE framing and heartbeats (:mod:`.framing`), splitting large
events into ``_delta_sse`` groups (:mod:`.delta`) and the producer pump (:mod:`.pump`). No Flask here; the
response objects and the worker's stream budget are in :mod:`assistant_bridge.web.sse`."""
