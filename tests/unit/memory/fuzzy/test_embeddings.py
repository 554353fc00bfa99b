from __future__ import annotations

import numpy as np
import pytest

from bot.errors import InvalidSettingError
from bot.memory.embeddings import EMBEDDING_DIM, HashEmbedder, MiniLMEmbedder, embedder_from_settings
from bot.settings import Settings


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))


# ---------------------------------------------------------------------- the hash stand-in
def test_hash_embedder_is_deterministic_unit_length_and_lexical() -> None:
    embedder = HashEmbedder()
    first = embedder(["The rehearsal room is booked", "room booked for the rehearsal", "budget for the party"])
    again = HashEmbedder()(["The rehearsal room is booked"])
    assert np.array_equal(first[0], again[0])
    assert all(len(v) == EMBEDDING_DIM and abs(np.linalg.norm(v) - 1.0) < 1e-5 for v in first)
    assert cosine(first[0], first[1]) > cosine(first[0], first[2])


def test_hash_embedder_gives_an_empty_text_a_valid_vector() -> None:
    (vector,) = HashEmbedder()([""])
    assert abs(np.linalg.norm(vector) - 1.0) < 1e-6


def test_embedder_is_picked_from_settings_by_name() -> None:
    assert isinstance(embedder_from_settings(Settings(embedder="hash")), HashEmbedder)
    assert isinstance(embedder_from_settings(Settings(embedder="minilm")), MiniLMEmbedder)
    with pytest.raises(InvalidSettingError, match="ASKWITH_EMBEDDER"):
        embedder_from_settings(Settings(embedder="openai"))


@pytest.mark.parametrize("embedder", [HashEmbedder(dim=64), MiniLMEmbedder(batch_size=8, threads=1)])
def test_embedders_speak_chromas_protocol_without_legacy_fallbacks(embedder: HashEmbedder | MiniLMEmbedder) -> None:
    rebuilt = type(embedder).build_from_config(embedder.get_config())
    assert rebuilt.get_config() == embedder.get_config()
    assert embedder.name() != "default"
    assert not embedder.is_legacy()
    assert embedder.default_space() == "cosine"


# ---------------------------------------------------------------------- the real model
@pytest.fixture(scope="module")
def minilm() -> MiniLMEmbedder:
    return MiniLMEmbedder(batch_size=4)


def test_minilm_ranks_paraphrases_above_unrelated_sentences(minilm: MiniLMEmbedder) -> None:
    pairs = [
        ("Monica is moving into a new apartment next week.", "Next week Monica moves to a different flat."),
        ("Ross has a dentist appointment on Thursday morning.", "On Thursday morning Ross sees his dentist."),
        ("The launch party budget is four thousand euros.", "We can spend 4,000 euros on the launch party."),
    ]
    unrelated = ["The staging cluster is down for maintenance.", "Chandler bought a duck and a chick."]
    vectors = minilm([text for pair in pairs for text in pair] + unrelated)
    for i in range(len(pairs)):
        original, paraphrase = vectors[2 * i], vectors[2 * i + 1]
        others = [v for j, v in enumerate(vectors) if j not in (2 * i, 2 * i + 1)]
        assert cosine(original, paraphrase) > 0.6
        assert cosine(original, paraphrase) > max(cosine(original, other) for other in others) + 0.15


def test_minilm_vectors_are_unit_length_and_independent_of_batching(minilm: MiniLMEmbedder) -> None:
    texts = ["short", "a much longer sentence that needs padding in any batch it shares with short texts", "mid one"]
    together = minilm(texts)
    alone = [minilm([text])[0] for text in texts]
    assert [len(v) for v in together] == [EMBEDDING_DIM] * 3
    for a, b in zip(together, alone, strict=True):
        assert abs(np.linalg.norm(a) - 1.0) < 1e-4
        assert cosine(a, b) > 0.9999  # padding is masked out of the mean; order is restored after sorting


def test_minilm_truncates_long_texts_at_256_word_pieces(minilm: MiniLMEmbedder) -> None:
    head = " ".join(f"word{i}" for i in range(300))
    long_a, long_b = minilm([head + " the ending is about cats", head + " something entirely different: taxes"])
    assert cosine(long_a, long_b) > 0.9999  # everything after the first 256 word pieces is cut
