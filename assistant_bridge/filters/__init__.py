"""Pre- and post-generation filters: when to answer "I don't know".

The conversational search loop asks a :class:`PreFilter` whether the snippets can answer the query, and a
:class:`PostFilter` whether the generated answer is supported by them; a score below the level's
:class:`Thresholds` means "I don't know". The real filters are small ONNX classifiers over language-light
features (USE-multilingual sentence similarities, lexical, number and name overlap); the pre-filter also
reads the passage window that shares the most words with the query with a fine-tuned MiniLM cross-encoder
(``cross.py``, int8 ONNX), and when its score is low takes a second look at the next windows
(:meth:`OnnxPreFilter.second_look`, which the loop asks for). See ``filters_models/MODEL_CARD_pre.md`` and ``MODEL_CARD_post.md``.

Usage::

    pre, post = load_filters()          # ModelLoadError here if a file is missing or corrupt
    pre.warm_up(); post.warm_up()       # once per worker, after the fork
    t = load_thresholds("less_often")
    if pre.score(query, snippets) < t.pre_gen: ...
"""

from .fakes import FakePostFilter, FakePreFilter
from .onnx_filters import OnnxPostFilter, OnnxPreFilter, default_model_dir, load_filters, load_thresholds
from .protocols import DEFAULT_LEVEL, LEVELS, PostFilter, PreFilter, Thresholds

__all__ = [
    "DEFAULT_LEVEL",
    "LEVELS",
    "FakePostFilter",
    "FakePreFilter",
    "OnnxPostFilter",
    "OnnxPreFilter",
    "PostFilter",
    "PreFilter",
    "Thresholds",
    "default_model_dir",
    "load_filters",
    "load_thresholds",
]
