"""The filter language: parse, validate, print and translate metadata filters.

A filter arrives as a string (watsonx Assistant custom-service search sends ``filter``) or as an Amazon Bedrock
``RetrievalFilter`` object. Both become one small AST, checked against a whitelist of typed fields, and each
backend gets its own translation from that AST. Invariants:

* user text is never pasted into a backend expression: identifiers come from the field table, values are
  re-encoded by the translator (string escaping, no control characters, finite numbers in int64 range);
* scope fields (tenant, owner, workspaces, session) cannot be named, so a filter can only narrow a search;
* a value that is missing (``None`` or absent) makes its comparison *unknown*, SQL style: ``not`` of unknown is
  unknown and a record matches only if the whole filter is true. :func:`matches`, :func:`to_milvus` (nullable
  fields) and :func:`to_elasticsearch` all follow this rule, so the three agree.

Module map: :mod:`.expr` (field specs, limits, AST nodes, tree walks), :mod:`.validation` (field and value
checks), :mod:`.parse` (tokenizer, parser, printer), :mod:`.evaluation` (in-memory three-valued evaluation),
:mod:`.translate` (Milvus and Elasticsearch), :mod:`.retrieval_filter` (Bedrock ``RetrievalFilter``).

The grammar is documented in ``docs/filter-language.md``.
"""

from assistant_bridge.core.filters.evaluation import evaluate, matches, record_of_chunk, stored_record
from assistant_bridge.core.filters.expr import (
    DEFAULT_FIELDS,
    MAX_COMPARISONS,
    MAX_DEPTH,
    MAX_FILTER_CHARS,
    MAX_LIST_ITEMS,
    And,
    Comparison,
    Expr,
    FieldSpec,
    InList,
    Not,
    Or,
    StringMatch,
    depth,
    describe_fields,
)
from assistant_bridge.core.filters.parse import format_filter, parse_filter
from assistant_bridge.core.filters.retrieval_filter import from_retrieval_filter
from assistant_bridge.core.filters.translate import to_elasticsearch, to_milvus
from assistant_bridge.core.filters.validation import validate

__all__ = [
    "DEFAULT_FIELDS",
    "MAX_COMPARISONS",
    "MAX_DEPTH",
    "MAX_FILTER_CHARS",
    "MAX_LIST_ITEMS",
    "And",
    "Comparison",
    "Expr",
    "FieldSpec",
    "InList",
    "Not",
    "Or",
    "StringMatch",
    "depth",
    "describe_fields",
    "evaluate",
    "format_filter",
    "from_retrieval_filter",
    "matches",
    "parse_filter",
    "record_of_chunk",
    "stored_record",
    "to_elasticsearch",
    "to_milvus",
    "validate",
]
