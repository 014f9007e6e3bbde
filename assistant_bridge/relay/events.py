"""The events of a relayed stream (:meth:`Relay.stream <assistant_bridge.relay.relay.Relay.stream>` and
``POST /v1/relay/message_stream``). On the wire each is ``event: <name>`` + ``data: {"<name>": payload}``,
like the assistant's own ``message_stream`` (spec §A.4):

* ``partial_item``: the assistant's, passed through: ``{response_type, text: <delta>, streaming_metadata: {id}}``;
* ``complete_item``: the assistant's, passed through: the full generic item plus ``streaming_metadata``; an
  item with the ``id`` of earlier partial items replaces them (an answer retracted as "I don't know");
* ``relay_search``: one round of searches ran: ``{round, searches: [{round, query, filter?, result_count, ms,
  error?}], search_results: [...sent...], trimmed}``;
* ``final_response``: the assistant's final ``/message`` body (``output``, ``context``, ``user_id``);
* ``relay_end``: the summary: ``{outcome, rounds, trimmed, searches}``; ``outcome`` is ``answer``, ``idk``,
  ``no_results``, ``error``, ``search``, ``text`` or ``empty``;
* ``error``: ``{code, message}``, after which the stream ends (a failure once the stream was open).

The shapes are ``schemas/relay_stream_event.schema.json``.
"""

from __future__ import annotations

PASSTHROUGH = ("partial_item", "complete_item")
RELAY_EVENTS = ("partial_item", "complete_item", "relay_search", "final_response", "relay_end", "error")
