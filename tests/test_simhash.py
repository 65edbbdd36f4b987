from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from learnloop.simhash import hamming, simhash64, simhash64_hex

words = st.lists(
    st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789", min_size=1, max_size=10), min_size=1, max_size=40
)
texts = words.map(" ".join)


@given(texts)
def test_hex_form_is_sixteen_lowercase_hex_digits(text: str) -> None:
    value = simhash64_hex(text)
    assert len(value) == 16 and int(value, 16) == simhash64(text)
    assert value == value.lower()


@given(texts)
def test_deterministic_and_insensitive_to_case_and_spacing(text: str) -> None:
    assert simhash64(text) == simhash64(text)
    assert simhash64(text) == simhash64("  " + text.upper().replace(" ", "   ") + "\n")


@given(texts, texts, texts)
def test_hamming_is_a_metric(a: str, b: str, c: str) -> None:
    x, y, z = simhash64(a), simhash64(b), simhash64(c)
    assert hamming(x, x) == 0
    assert hamming(x, y) == hamming(y, x)
    assert hamming(x, z) <= hamming(x, y) + hamming(y, z)
    assert 0 <= hamming(x, y) <= 64
    assert hamming(simhash64_hex(a), simhash64_hex(b)) == hamming(x, y)


@given(
    st.lists(
        st.sampled_from(["boil", "mash", "hop", "yeast", "water", "grain", "kettle", "wort", "lager", "stout"]),
        min_size=25,
        max_size=40,
    ),
    st.sampled_from(["really", "quite", "indeed"]),
)
def test_one_extra_word_moves_few_bits(base: list[str], extra: str) -> None:
    text = " ".join(base)
    assert hamming(simhash64(text), simhash64(text + " " + extra)) <= 16


def test_near_duplicates_are_closer_than_unrelated_texts() -> None:
    a = "Grainfather Gen 1 boil-off rate is ~3.5 L/hr, lower than typical 4-5 L/hr"
    b = "grainfather gen 1 boil off rate is ~3.5 l/hr, lower than the typical 4-5 L/hr"
    c = "US-05 typically attenuates to ~82% in this system, higher than the listed 75%"
    assert hamming(simhash64(a), simhash64(b)) <= 8
    assert hamming(simhash64(a), simhash64(c)) > 16


def test_empty_text_hashes_to_zero() -> None:
    assert simhash64("") == 0 and simhash64("!!! ...") == 0
