"""Generator protocol helpers, the fake, the factory and the sentence-embedder adapters."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np
import pytest

from assistant_bridge.core.snippets import Snippet
from assistant_bridge.embedders.base import HashingEmbedder
from assistant_bridge.errors import ConfigurationError, GeneratorError
from assistant_bridge.generators import (
    FakeGenerator,
    Generation,
    GenerationStream,
    Generator,
    approx_tokens,
    is_declined,
    make_generator,
)
from assistant_bridge.generators.extractive import ExtractiveGenerator
from assistant_bridge.generators.sentence_embedder import EncoderEmbedder, UseSentenceEmbedder

pytestmark = pytest.mark.unit

SNIPPETS = [Snippet("First fact. Second fact.", "A", 0), Snippet("Third fact here.", "B", 4)]


def test_generation_stream_yields_deltas_then_the_result() -> None:
    finished: list[str] = []

    def finish(text: str) -> Generation:
        finished.append(text)
        return Generation(text, (), False, "m")

    stream = GenerationStream(iter(["ab", "c", "d"]), finish)
    assert next(stream) == "ab"
    assert stream.result().text == "abcd"  # drains the rest
    assert finished == ["abcd"]
    assert list(stream) == []
    assert stream.result().text == "abcd" and finished == ["abcd"]


def test_generation_stream_propagates_errors() -> None:
    def broken() -> Iterator[str]:
        yield "a"
        raise GeneratorError("stream broke")

    stream = GenerationStream(broken(), lambda t: Generation(t, (), False, "m"))
    assert next(stream) == "a"
    with pytest.raises(GeneratorError):
        next(stream)


@pytest.mark.parametrize(
    "text, declined",
    [
        ("I don't know.", True),
        ("I don’t know", True),
        ("  i do not know the answer", True),
        ("", True),
        ("Je ne sais pas.", True),
        ("わかりません。", True),
        ("**I don't know**", True),
        ("The answer is 30 days.", False),
        ("Nobody knows, but I don't know is wrong.", False),
    ],
)
def test_is_declined(text: str, declined: bool) -> None:
    assert is_declined(text) is declined


def test_approx_tokens() -> None:
    assert approx_tokens("") == 0
    assert approx_tokens("the cat sat") == 3
    assert approx_tokens("internationalization") == 4
    assert approx_tokens("経費精算") == 4
    assert approx_tokens("Hello, world!") == 4
    english = "The quick brown fox jumps over the lazy dog near the riverbank every morning."
    assert 15 <= approx_tokens(english) <= 18  # 16 with cl100k


def test_fake_generator_cites_first_sentences_and_streams_the_same_text() -> None:
    g = FakeGenerator(chunk_chars=3)
    out = g.generate("q", SNIPPETS)
    assert out.text == "First fact. Third fact here."
    assert [(c.search_result_index, out.text[slice(*c.ranges[0])]) for c in out.citations] == [
        (0, "First fact."),
        (4, "Third fact here."),
    ]
    stream = g.stream("q", SNIPPETS)
    assert "".join(stream) == out.text and stream.result() == out
    assert len(g.calls) == 2


def test_fake_generator_options() -> None:
    assert FakeGenerator("fixed").generate("q", SNIPPETS).text == "fixed"
    assert FakeGenerator(declined=True).generate("q", SNIPPETS).declined
    with pytest.raises(GeneratorError):
        FakeGenerator(error="down").generate("q", SNIPPETS)
    assert FakeGenerator(token_counter=lambda q, s: 7).prompt_tokens("q", SNIPPETS) == 7
    assert FakeGenerator().generate("q", []).declined


@pytest.mark.parametrize("kind", ["extractive", "fake"])
def test_factory_kinds_satisfy_the_protocol(kind: str) -> None:
    options = {"embedder": "none"} if kind == "extractive" else {}
    g = make_generator(kind, **options)
    assert isinstance(g, Generator)
    g.warm_up()
    assert g.generate("First fact?", SNIPPETS).text


def test_factory_embedder_options() -> None:
    ext = make_generator("extractive", embedder="none")
    assert isinstance(ext, ExtractiveGenerator) and ext.embedder is None
    assert isinstance(make_generator("extractive").embedder, UseSentenceEmbedder)  # lazy: nothing loaded yet
    hashing = HashingEmbedder(16)
    assert make_generator("extractive", embedder=hashing).embedder is hashing  # type: ignore[attr-defined]
    assert make_generator("extractive", embedder="hashing").embedder.name == "hashing-64"  # type: ignore[attr-defined]

    class Encoder:
        def encode(self, texts: Sequence[str]) -> np.ndarray:
            return np.ones((len(texts), 4))

    adapted = make_generator("extractive", embedder=Encoder()).embedder  # type: ignore[attr-defined]
    assert isinstance(adapted, EncoderEmbedder)
    rows = adapted.embed_passages(["a", "b"])
    assert rows.shape == (2, 4) and np.allclose(np.linalg.norm(rows, axis=1), 1.0)


def test_factory_errors() -> None:
    with pytest.raises(ConfigurationError):
        make_generator("gpt-9")
    with pytest.raises(ConfigurationError):
        make_generator("extractive", embedder=42)
    with pytest.raises(ConfigurationError):
        make_generator("extractive", embedder="none", no_such_weight=1.0)


@pytest.mark.slow
def test_use_sentence_embedder_is_normalised_multilingual_and_cached() -> None:
    emb = UseSentenceEmbedder(cache_size=3)
    vecs = emb.embed_passages(["Reset your password.", "Réinitialisez votre mot de passe.", "今日は晴れです。"])
    assert vecs.shape == (3, 512)
    assert np.allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-4)
    assert vecs[0] @ vecs[1] > vecs[0] @ vecs[2]
    again = emb.embed_queries(["Reset your password."])
    assert np.allclose(again[0], vecs[0])
    emb.embed_passages(["a", "b", "c", "d"])
    assert len(emb._encoder._cache) == 3  # type: ignore[attr-defined]
