import pytest

from chronomem.text.titles import is_a_title


@pytest.mark.parametrize("name", [
    "CEO", "CFO", "COO", "CTO", "CISO", "VP", "SVP", "Chief Operating Officer", "Chief Integration Officer",
    "Managing Director", "Vice President", "Chairwoman", "Chair", "General Counsel", "Founder",
    "Vice President of Sales and Marketing", "Chief  Financial Officer",
])
def test_titles_of_a_position(name: str) -> None:
    assert is_a_title(name)


@pytest.mark.parametrize("name", [
    "Victor Lang", "Heliox Energy", "CERN", "COVID", "DY1307", "IBM", "Officer Kim's", "District 9 Director",
    "Directors Guild", "Pinecone Freight", "the CEO", "ceo", "President Hotel Prague",
])
def test_names_are_not_titles(name: str) -> None:
    assert not is_a_title(name)
