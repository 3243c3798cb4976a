"""Signals that nudge the fused order: dates in a window, named speakers, strong conversations."""

from __future__ import annotations

from datetime import UTC, datetime

from chronomem.domain import Episode, Fact
from chronomem.search.signals import (
    across_conversations,
    by_conversation,
    dated_inside,
    dated_near,
    is_dated_inside,
    replies_to_top,
    speaker_named,
    unnamed_speakers_down,
)
from chronomem.text.timeparse import TimeWindow

MAY = TimeWindow(datetime(2023, 5, 1, tzinfo=UTC), datetime(2023, 6, 1, tzinfo=UTC), "May 2023")


def _ep(i: str, speaker: str, day: int, source: str = "thread t1") -> Episode:
    when = datetime(2023, 5, day, 12, tzinfo=UTC)
    return Episode(id=i, group_id="g", content=i, speaker=speaker, reference_time=when, source_description=source)


def _fact(**times) -> Fact:
    return Fact(group_id="g", source_id="a", target_id="b", fact="x", **times)


def test_events_inside_and_bounded_states_overlapping_a_window_are_dated_inside():
    assert is_dated_inside(_fact(valid_at=datetime(2023, 5, 7, tzinfo=UTC)), [MAY])
    assert not is_dated_inside(_fact(valid_at=datetime(2020, 1, 1, tzinfo=UTC)), [MAY])  # open-ended: an event
    state = _fact(valid_at=datetime(2020, 1, 1, tzinfo=UTC), invalid_at=datetime(2024, 1, 1, tzinfo=UTC))
    assert is_dated_inside(state, [MAY])
    assert not is_dated_inside(_fact(), [MAY])
    objects = {"a": _ep("a", "Ann", 3), "b": _ep("b", "Ann", 3).model_copy(update={"reference_time": MAY.end})}
    assert dated_inside(["b", "a"], objects, [MAY]) == ["a"]


def test_speaker_named_in_the_query():
    episodes = {"1": _ep("1", "Dave", 1), "2": _ep("2", "Calvin", 1), "3": _ep("3", "Dave", 2)}
    assert speaker_named(["3", "2", "1"], episodes, "What did dave open in May?") == ["3", "1"]
    assert speaker_named(["1", "2"], episodes, "What do Dave and Calvin agree on?") == []  # both: no signal
    assert speaker_named(["1", "2"], episodes, "What did Davey say?") == []  # whole words only


def test_conversation_ranking_lifts_turns_next_to_a_strong_hit():
    episodes = {
        "strong": _ep("strong", "A", 1), "same_day": _ep("same_day", "B", 1),
        "other_day": _ep("other_day", "A", 2), "other_thread": _ep("other_thread", "A", 1, source="thread t2"),
    }
    fused = [("strong", 0.9), ("other_day", 0.5), ("other_thread", 0.4), ("same_day", 0.1)]
    assert by_conversation(fused, episodes) == ["strong", "same_day", "other_day", "other_thread"]


def test_replies_to_a_top_hit_follow_the_order_of_the_hit():
    def reply(i: str, parent: str | None) -> Episode:
        return _ep(i, "B", 1).model_copy(update={"metadata": {"reply_to": parent}})

    episodes = {"q1": reply("q1", None), "q2": reply("q2", None), "a2": reply("a2", "q2"),
                "a1": reply("a1", "q1"), "far": reply("far", "zzz")}
    fused = [("q1", 0.9), ("q2", 0.8), ("far", 0.5), ("a2", 0.2), ("a1", 0.1)]
    assert replies_to_top(fused, episodes) == ["a1", "a2"]
    assert replies_to_top(fused, episodes, top=1) == ["a1"]


def test_dated_near_follows_the_inside_ones_nearest_first_within_the_margin():
    def episode(key: str, day: int) -> Episode:
        when = datetime(2023, 5, day, tzinfo=UTC)
        return Episode(id=key, group_id="g", content=key, reference_time=when, created_at=when)

    week = TimeWindow(datetime(2023, 5, 8, tzinfo=UTC), datetime(2023, 5, 15, tzinfo=UTC), "last week")
    objects = {"far": episode("far", 30), "inside": episode("inside", 10), "next": episode("next", 16),
               "before": episode("before", 4)}
    order = ["far", "next", "before", "inside"]
    assert dated_near(order, objects, [week], margin=0) == ["inside"]
    # 16 May is one day after the window, 4 May four days before it; 30 May is beyond one window length
    assert dated_near(order, objects, [week], margin=1.0) == ["inside", "next", "before"]


def test_across_conversations_deals_each_conversation_its_best_first():
    def turn(key: str, session: str) -> Episode:
        when = datetime(2023, 5, 1, tzinfo=UTC)
        return Episode(id=key, group_id="g", content=key, reference_time=when, created_at=when,
                       source_description=session)

    objects = {"a1": turn("a1", "A"), "a2": turn("a2", "A"), "a3": turn("a3", "A"), "b1": turn("b1", "B")}
    fused = [("a1", 0.9), ("a2", 0.8), ("a3", 0.7), ("b1", 0.1)]
    assert across_conversations(fused, objects) == ["a1", "b1", "a2", "a3"]


def test_turns_of_a_speaker_the_query_does_not_name_move_down_by_the_offset():
    episodes = {"o1": _ep("o1", "Calvin", 1), "d1": _ep("d1", "Dave", 1), "o2": _ep("o2", "Calvin", 1),
                "d2": _ep("d2", "Dave", 1), "d3": _ep("d3", "Dave", 1)}
    fused = [("o1", 0.9), ("d1", 0.8), ("o2", 0.7), ("d2", 0.6), ("d3", 0.5)]
    # Calvin's turns are judged two places lower: o1 (0 → 2) behind d1 (1), o2 (2 → 4) behind d3 (4)
    assert [i for i, _ in unnamed_speakers_down(fused, episodes, "What did Dave open?", 2)] == [
        "d1", "o1", "d2", "d3", "o2"
    ]
    assert [s for _, s in unnamed_speakers_down(fused, episodes, "What did Dave open?", 2)] == [0.9, 0.8, 0.7, 0.6, 0.5]
    assert unnamed_speakers_down(fused, episodes, "What did Dave open?", 0) == fused
    assert unnamed_speakers_down(fused, episodes, "What happened?", 2) == fused  # nobody named
    assert unnamed_speakers_down(fused, episodes, "What do Dave and Calvin share?", 2) == fused  # both named
