"""Query vectors are cached: a repeated question is embedded once, siblings share the cache, and it stays bounded."""

from __future__ import annotations

from chromadb.api.types import Documents, Embeddings

from bot.memory.embeddings import HashEmbedder
from bot.memory.vector_index import QueryVectors, VectorIndex


class CountingEmbedder(HashEmbedder):
    def __init__(self) -> None:
        super().__init__()
        self.embedded: list[str] = []

    def __call__(self, input: Documents) -> Embeddings:
        self.embedded.extend(input)
        return super().__call__(input)


def test_a_repeated_question_is_embedded_once_and_the_cache_is_bounded() -> None:
    embedder = CountingEmbedder()
    cache = QueryVectors(embedder, size=2)
    first = cache.vector("who moves to Paris?")
    again = cache.vector("who moves to Paris?")
    assert list(first) == list(again) == list(embedder(["who moves to Paris?"])[0])
    assert embedder.embedded.count("who moves to Paris?") == 2  # once by the cache, once just above
    cache.vector("b")
    cache.vector("c")  # evicts the least recently used: the Paris question
    cache.vector("who moves to Paris?")
    assert embedder.embedded.count("who moves to Paris?") == 3


def test_the_windows_index_shares_its_siblings_cache() -> None:
    index = VectorIndex(lambda: None, CountingEmbedder())
    assert index.windows().query_vectors is index.query_vectors
