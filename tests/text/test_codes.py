import pytest

from chronomem.text.codes import codes_in, references_given


def test_flight_numbers_and_booking_references_are_codes_but_times_quantities_and_words_are_not():
    assert codes_in("Norwegian cancelled DY1303, so I'm now on DY1307 (ref QX7L2P), DY1307 at 10AM.") == [
        "DY1303", "DY1307", "QX7L2P"]
    assert codes_in("An A320 on IB3516, 500MG twice, back in the 1990S, vitamin B12, MP3, COVID-19, UA-123.") == [
        "A320", "IB3516"]
    assert codes_in("Flight 2024 left at 7 and 2FA is on.") == []


@pytest.mark.parametrize(("text", "given"), [
    ("I'm flying on KL1062 on May 2, booking reference ZP8Q4M.", [("booking reference", "ZP8Q4M")]),
    ("I've booked the Hotel Prinsenhof from May 2, confirmation HP20417.", [("confirmation", "HP20417")]),
    ("We booked two nights at Hôtel Lutèce. Confirmation code is 7KD4PW.", [("confirmation code", "7KD4PW")]),
    ("I'm on BA283, and my booking reference: QX7L2P", [("booking reference", "QX7L2P")]),
    # whose reference it is, the words do not settle: a colleague's, a note's, Ivan's
    ("My colleague Bethan is booked on KL1062, booking reference QQ12AB.", []),
    ("Noted: BA283 on November 20, booking reference QX7L2P.", []),
    ("Ivan booked it, reference AB1234.", []),
    ("I'm on flight BA283.", []),  # a code, not given as a reference
])
def test_a_code_the_writer_gives_as_their_own_reference(text: str, given: list[tuple[str, str]]) -> None:
    found = references_given(text)
    assert [(r.label, r.code) for r in found] == given
    assert all(text[r.start:r.end].endswith(r.code) for r in found)


def test_the_writers_words_begin_after_who_says_them() -> None:
    said = "Rhys: I'm flying on KL1062, booking reference ZP8Q4M."
    assert references_given(said) == []  # "Rhys:" opens no sentence of the writer's own
    assert [r.code for r in references_given(said, len("Rhys: "))] == ["ZP8Q4M"]
