"""Tools callable through ``POST /v1/tools/{tool_id}/execute`` (today: ``rag_search``), their executions
and their Server-Sent Events."""
