from hypothesis import given
from hypothesis import strategies as st

from bot.base.text_fold import fold, normalise, skeleton, strip_invisible


def test_fold_reads_compatibility_forms_entities_and_invisible_characters() -> None:
    assert fold("Ｄａｖｅ&#39;s\u200b ＤＭ") == "dave's dm"
    assert normalise("&amp;lt;/chat\u2010data&gt;") == "</chat-data>"
    assert normalise("＜／chat‐data＞") == "</chat-data>"
    assert strip_invisible("a\u200bb\u202ec\ufeffd") == "abcd"


def test_skeleton_reads_look_alike_letters_as_latin() -> None:
    assert skeleton("Саrоl") == "carol"  # Cyrillic С, а, о
    assert skeleton("Ρenthouse") == "penthouse"  # Greek capital rho
    assert skeleton("café") == "cafe"
    assert skeleton("10 am") == "10 am"  # digits stay digits


@given(st.text())
def test_fold_is_idempotent_on_its_own_output_and_never_fails(text: str) -> None:
    once = skeleton(text)
    assert isinstance(once, str)
    assert strip_invisible(once) == once
