"""The conversational ``/message`` API behind the HTTP routes: assistants and environments, sessions, search
sources, one turn of conversational search, the response envelope and SSE streaming.

Module map: :mod:`.assistants` (settings), :mod:`.sessions` (SQLite), :mod:`.sources` (built-in backend and
remote custom search servers), :mod:`.runtime` (per-worker components), :mod:`.turn` (one turn),
:mod:`.responses` (output items and debug), :mod:`.envelope` (request/response bodies), :mod:`.sse`.
"""
