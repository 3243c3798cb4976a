"""Names of organisations and venues that say what they are by their head word.

"Westcombe Academy", "Kingsmead Free School", "Brightwater Sports Clinic", "Pellworth Instruments",
"the Hotel Zubia Berri", "University of Bath": a run of capitalised words ending in a word that
names a kind of organisation or venue, or opening with one and "of". A model that lists the entities
of a message leaves such names out as often as not (the 1.5B listed only the writer of "I've taught
chemistry at Westcombe Academy in Exeter since 2018"), and the fact it then writes has no end. The
head word is what lets a name be taken from the text alone, with no gazetteer: a capitalised run
without one ("Saturday Mornings", "Big News") is no name of this kind.
"""

from __future__ import annotations

import re

__all__ = ["organisations_named_in"]

_HEADS = (
    "Academy|University|College|School|Hospital|Clinic|Centre|Center|Hotel|Hostel|Inn|Bank|Pharmacy|Library|"
    "Museum|Airport|Church|Corporation|Corp|Company|Inc|Ltd|LLC|PLC|GmbH|Group|Partners|Associates|Foundation|"
    "Institute|Society|Council|Club|Studio|Studios|Labs|Logistics|Systems|Technologies|Instruments|Foods|Energy|"
    "Shipping|Freight|Airlines|Airways|Insurance|Consulting|Solutions|Pharmaceuticals|Motors|Industries|Holdings|"
    "Analytics|Robotics|Media|Publishing|Ceramics|Surgery|Practice|Restaurant|Bakery|Agency|Trust|Gallery|"
    "Theatre|Theater|Orchestra|Quartet|Stadium|Gym|Rovers|FC"
)
_LEADS = "Hotel|University|College|Bank|Museum|Institute|Society|Hospital|Church"
_WORD = r"[A-Z][\w'’&-]*"
# words that may open a capitalised run without being part of the name ("The Hotel Zubia Berri",
# "At Kingsmead Free School", "My Brightwater Sports Clinic")
_NOT_THE_NAME = frozenset({"The", "A", "An", "My", "Our", "Your", "His", "Her", "Their", "Its", "This", "That", "At",
                           "In", "On", "To", "From", "For", "With", "And", "But", "So", "Since", "Then", "Now", "I"})
_NAMES = re.compile(
    rf"(?<![\w'’-])(?:(?:{_WORD}\s+){{1,4}}(?:{_HEADS})(?![\w'’-])"
    rf"|(?:{_LEADS})(?:\s+of(?:\s+the)?)?(?:\s+{_WORD}){{1,3}}(?![\w'’-]))"
)


def organisations_named_in(text: str) -> list[str]:
    """The organisation and venue names ``text`` gives by their head word, each once, in order."""
    found = []
    for match in _NAMES.finditer(text):
        words = match.group().split()
        while words and words[0] in _NOT_THE_NAME:
            words = words[1:]
        if len(words) >= 2:
            found.append(" ".join(words))
    return list(dict.fromkeys(found))
