from chronomem.text.codes import codes_in


def test_flight_numbers_and_booking_references_are_codes_but_times_quantities_and_words_are_not():
    assert codes_in("Norwegian cancelled DY1303, so I'm now on DY1307 (ref QX7L2P), DY1307 at 10AM.") == [
        "DY1303", "DY1307", "QX7L2P"]
    assert codes_in("An A320 on IB3516, 500MG twice, back in the 1990S, vitamin B12, MP3, COVID-19, UA-123.") == [
        "A320", "IB3516"]
    assert codes_in("Flight 2024 left at 7 and 2FA is on.") == []
