"""Pure resolution rules: entity match/ask/new, fact candidates, dates, summaries, removal plans."""

from __future__ import annotations

from ingest_doubles import at

from chronomem.domain import Entity, Fact
from chronomem.ingest.dates import parse_model_datetime, resolve_relative
from chronomem.ingest.fact_resolution import identical_fact, same_relation, select_candidates, single_valued_outcome
from chronomem.ingest.prompts import MAX_ALIASES, ExtractedEntity
from chronomem.ingest.removal import plan_removal
from chronomem.ingest.resolution import (
    Candidate,
    ResolutionThresholds,
    Verdict,
    decide,
    exact_match,
    match_key,
    merge_extracted,
    search_query,
)
from chronomem.ingest.summaries import append_sentences, rebuild_summary, remove_sentences, to_rewrite

T = ResolutionThresholds()


def entity(name: str, *labels: str, **extra: object) -> Entity:
    return Entity(group_id="g", name=name, labels=("Entity", *labels), **extra)


def test_near_identical_spelling_is_asked_about_never_merged():
    acme = entity("Acme Corporation")
    decision = decide("Acme Corporaton", ("Entity",), [Candidate(acme, 0.99)], T)
    assert decision.verdict is Verdict.AMBIGUOUS and decision.candidates == (acme,)


def test_look_alike_identifiers_are_asked_about_even_with_near_identical_embeddings():
    flight = entity("UA 1234")
    decision = decide("UA 1235", ("Entity",), [Candidate(flight, 0.999)], T)
    assert decision.verdict is Verdict.AMBIGUOUS and decision.match is None


def test_a_name_equal_under_the_key_merges_whichever_search_found_it():
    zurich = entity("Zürich")
    assert decide("Zurich", ("Entity",), [Candidate(zurich, 0.1)], T).match == zurich
    beatles = entity("Beatles", aliases=("Fab Four",))
    assert decide("the fab four", ("Entity",), [Candidate(beatles, None)], T).match == beatles


def test_nickname_or_partial_name_is_ambiguous_not_merged():
    robert = entity("Robert Smith")
    decision = decide("Bob", ("Entity",), [Candidate(robert, 0.05)], T)
    assert decision.verdict is Verdict.AMBIGUOUS and decision.candidates == (robert,)
    assert "robert" in search_query("Bob").split()


def test_unrelated_names_are_new_and_typed_entities_of_other_types_never_merge():
    assert decide("Lisbon", ("Entity",), [Candidate(entity("Alice"), 0.1)], T).verdict is Verdict.NEW
    paris_city = entity("Paris", "City")
    assert decide("Paris", ("Entity", "Person"), [Candidate(paris_city, 0.99)], T).verdict is Verdict.NEW


def test_match_key_ignores_case_typography_and_leading_articles_but_not_symbols_or_numbers():
    assert match_key("The Acme, Inc.") == match_key("acme inc")
    assert match_key("U.S.A.") == match_key("USA") and match_key("Coca\u2011Cola") == match_key("coca-cola")
    assert match_key("C#") != match_key("C") and match_key("Disney+") != match_key("Disney")
    assert match_key("Henry VII") != match_key("Henry VIII") and match_key("The Who") != match_key("WHO")


def test_merge_extracted_keeps_first_mention_and_the_specific_type():
    merged = merge_extracted([ExtractedEntity(name="Alice"), ExtractedEntity(name="alice ", type="Person")])
    assert [(e.name, e.type) for e in merged] == [("Alice", "Person")]


def test_merge_extracted_keeps_the_aliases_of_every_mention():
    merged = merge_extracted([ExtractedEntity(name="IBM", aliases=["Big Blue"]),
                              ExtractedEntity(name="ibm", aliases=["International Business Machines", "Big Blue"])])
    assert [(e.name, e.aliases) for e in merged] == [("IBM", ["Big Blue", "International Business Machines"])]


def test_declared_aliases_are_trimmed_and_bounded_not_a_failed_answer():
    declared = [" Twitter ", "", "Twitter", "y" * 101, *(f"name {i}" for i in range(9))]
    extracted = ExtractedEntity(name="X", aliases=declared)
    assert extracted.aliases == ["Twitter", *(f"name {i}" for i in range(MAX_ALIASES - 1))]


def test_a_legal_form_matches_the_bare_name_both_ways():
    google, google_llc = entity("Google"), entity("Google LLC")
    assert exact_match("Google LLC", (), ("Entity",), [google]) == google
    assert exact_match("Google", (), ("Entity",), [google_llc]) == google_llc
    assert decide("Stripe, Inc.", ("Entity",), [Candidate(entity("Stripe"), 0.2)], T).verdict is Verdict.MATCH


def test_two_legal_forms_never_merge_not_even_through_a_bare_name():
    assert exact_match("Acme Inc", (), ("Entity",), [entity("Acme Ltd")]) is None
    assert exact_match("Acme Inc", (), ("Entity",), [entity("Acme", aliases=("Acme Ltd",))]) is None
    both = [entity("Acme Ltd"), entity("Acme Inc")]
    assert exact_match("Acme", (), ("Entity",), both) is None  # either company: the model decides
    assert decide("Acme", ("Entity",), [Candidate(e, 0.9) for e in both], T).verdict is Verdict.AMBIGUOUS
    assert decide("Acme Inc", ("Entity",), [Candidate(entity("Acme Ltd"), 0.99)], T).verdict is Verdict.AMBIGUOUS


def test_a_common_noun_is_not_the_bare_name_of_a_company():
    assert exact_match("Apple Inc.", (), ("Entity",), [entity("apple")]) is None
    assert exact_match("shell", (), ("Entity",), [entity("Shell plc")]) is None
    assert exact_match("Google LLC", (), ("Entity", "Organization"), [entity("Google", "Person")]) is None


def test_a_declared_alias_matches_exactly_one_entity_or_none():
    ibm, beatles = entity("IBM"), entity("Beatles")
    assert exact_match("International Business Machines", ("IBM",), ("Entity",), [beatles, ibm]) == ibm
    bob_jones, bob_smith = entity("Bob", aliases=("Bob Jones",)), entity("Bob Smith", aliases=("Bob",))
    assert exact_match("Robert", ("Bob",), ("Entity",), [bob_jones, bob_smith]) is None
    robert = entity("Robert Smith")
    assert exact_match("Robert Smith", ("Bob",), ("Entity",), [bob_jones, robert]) == robert  # the name comes first


def fact(source: str, target: str, text: str, relation: str = "RELATES_TO", **extra: object) -> Fact:
    return Fact(group_id="g", source_id=source, target_id=target, relation_type=relation, fact=text, **extra)


def test_identical_text_is_a_duplicate_only_between_the_same_pair():
    old = fact("a", "b", "Alice loves jazz.")
    assert identical_fact(fact("b", "a", "alice loves jazz"), [old]) == old
    assert identical_fact(fact("a", "c", "Alice loves jazz."), [old]) is None


def test_candidates_share_an_endpoint_and_are_close_in_meaning():
    new = fact("alice", "beta", "Alice works at Beta", "WORKS_FOR")
    same_pair = fact("alice", "beta", "Alice joined Beta", "JOINED")
    job = fact("alice", "acme", "Alice works at Acme", "WORKS_FOR")
    dog = fact("alice", "rex", "Alice adopted a dog", "OWNS")
    stranger = fact("bob", "acme", "Bob works at Acme", "WORKS_FOR")
    cosine = {same_pair.id: 0.6, job.id: 0.8, dog.id: 0.0, stranger.id: 1.0}
    found = select_candidates(new, [same_pair, job, dog, stranger], cosine, duplicate_similarity=0.55,
                              contradiction_similarity=0.9, same_relation_similarity=0.35, limit=5)
    assert found.duplicates == (same_pair,)
    assert found.contradictions == (job,)  # same relation, close enough; the dog and Bob are not candidates


def test_single_valued_relation_restates_or_replaces_without_a_model():
    lisbon = fact("alice", "lisbon", "Alice lives in Lisbon", "LIVES_IN")
    outcome = single_valued_outcome(fact("alice", "paris", "Alice lives in Paris", "LIVES_IN"), [lisbon])
    assert outcome.contradicts == (lisbon,) and outcome.duplicate_of is None
    again = single_valued_outcome(fact("alice", "lisbon", "Alice moved to Lisbon", "LIVES_IN"), [lisbon])
    assert again.duplicate_of == lisbon


def test_relative_and_partial_dates_resolve_against_the_reference_time():
    ref = at("2024-06-01T15:30")
    assert resolve_relative("I started two weeks ago", ref) == at("2024-05-18")
    assert resolve_relative("yesterday", ref) == at("2024-05-31")
    assert resolve_relative("last summer", ref) == at("2023-06-01")
    assert parse_model_datetime("2023-05-08", ref) == at("2023-05-08")
    assert parse_model_datetime("2019", ref) == at("2019-01-01")
    assert parse_model_datetime("2024-05-18T10:00:00+02:00", ref) == at("2024-05-18T08:00")
    assert parse_model_datetime("sometime", ref) is None and parse_model_datetime(None, ref) is None


def test_summaries_grow_shrink_and_are_rewritten_only_past_the_bound():
    summary = append_sentences("Alice is a pianist.", ["Alice works at Acme", "Alice is a pianist."])
    assert summary == "Alice is a pianist. Alice works at Acme."
    assert remove_sentences(summary, ["Alice works at Acme"]) == "Alice is a pianist."
    short, near, long = entity("A", summary="x" * 80), entity("B", summary="x" * 90), entity("C", summary="x" * 120)
    assert to_rewrite([short, near], 100, 0.7) == []
    assert to_rewrite([short, near, long], 100, 0.85) == [near, long]


def test_removal_plan_cascades_and_rebuilds_summaries():
    alice = entity("Alice", summary="Alice works at Acme. Alice plays piano.")
    piano = entity("piano")
    acme = entity("Acme")
    job = fact(alice.id, acme.id, "Alice works at Acme", episode_ids=("e1", "e2"))
    hobby = fact(alice.id, piano.id, "Alice plays piano", episode_ids=("e2",))
    old_job = fact(alice.id, acme.id, "Alice interned at Acme", episode_ids=("e0",), invalid_at=at("2024-01-01"),
                   expired_at=at("2024-06-01"), attributes={"superseded_by": hobby.id})
    plan = plan_removal("e2", [job, hobby], [job, hobby, old_job], [alice, piano, acme],
                        {alice.id: ["e1", "e2"], piano.id: ["e2"], acme.id: ["e1", "e2"]}, summary_max_chars=500,
                        now=at("2024-07-01"))
    assert plan.deleted_fact_ids == (hobby.id,)
    assert plan.deleted_entity_ids == (piano.id,)
    updated = {f.id: f for f in plan.updated_facts}
    assert updated[job.id].episode_ids == ("e1",)
    assert updated[old_job.id].expired_at is None and updated[old_job.id].invalid_at is None
    assert updated[old_job.id].recorded_at == at("2024-07-01")  # the reopening is a new version, recorded now
    (rebuilt,) = [e for e in plan.updated_entities if e.id == alice.id]
    assert "piano" not in rebuilt.summary and "Alice works at Acme." in rebuilt.summary
    assert rebuild_summary([job], 10) == ""  # nothing fits: nothing stated


def test_the_generic_relation_is_no_same_relation() -> None:
    # a small model gives RELATES_TO to nearly every fact: two such facts are no values of one thing
    husband, moved = fact("ana", "rui", "Ana's husband is Rui."), fact("ana", "porto", "Ana and Rui moved to Porto.")
    assert not same_relation(husband, moved)
    works, worked = fact("ana", "acme", "Ana works at Acme.", "WORKS_AT"), fact("ana", "beta", "Ana works at Beta.",
                                                                                "WORKS_AT")
    assert same_relation(works, worked)
