"""Precision and recall of the report cue (chronomem.search.reports) on hand-labelled sentences.

    .venv/bin/python bench/report_cues.py             # name: value lines; --errors lists the mistakes
    .venv/bin/python bench/report_cues.py --draw      # the draw the labels were made on (no labels)

The rule decides, for a question asking what the user did, whether a user sentence that mentions
the question's words *reports* the event ("I just got back from a camping trip") or not (a plan, a
question, a pasted document). ``bench/data/report_sentences.json`` holds 111 such sentences from
the LongMemEval dev haystacks, labelled by hand (its ``about`` says how they were drawn and what
counts as a report). Precision is the share of the sentences the rule lifts that do report the
event; recall the share of the reports it finds.
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

from chronomem.datasets.longmemeval import LmeQuestion, load_longmemeval
from chronomem.search import reports

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "longmemeval_s_dev.json.gz"
LABELS = ROOT / "bench" / "data" / "report_sentences.json"


def draw(questions: list[LmeQuestion], per_question: int = 3, seed: int = 18) -> list[dict[str, str]]:
    """Up to ``per_question`` user sentences per question the rule applies to that mention its words."""
    rng = random.Random(seed)
    drawn = []
    for q in questions:
        if q.is_abstention or not reports.asks_what_was_done(q.question):
            continue
        words = reports.done_words(q.question)
        pool = [
            (s.session_id, sentence)
            for s in q.sessions for t in s.turns if t.role == "user"
            for sentence in reports.sentences(t.content)
            if 20 <= len(sentence) <= 300 and reports.mentions(sentence, words)
        ]
        for session_id, sentence in rng.sample(pool, min(per_question, len(pool))):
            drawn.append({"question_id": q.question_id, "session_id": session_id, "sentence": sentence})
    return drawn


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--longmemeval", type=Path, default=DATA)
    parser.add_argument("--labels", type=Path, default=LABELS)
    parser.add_argument("--draw", action="store_true", help="print the draw the labels were made on")
    parser.add_argument("--errors", action="store_true", help="list the sentences the rule gets wrong")
    args = parser.parse_args(argv)
    questions = {q.question_id: q for q in load_longmemeval(args.longmemeval)}
    if args.draw:
        for row in draw(list(questions.values())):
            print(json.dumps(row, ensure_ascii=False))
        return 0
    rows = json.loads(args.labels.read_text())["sentences"]
    tp = fp = fn = tn = 0
    for row in rows:
        words = reports.done_words(questions[row["question_id"]].question)
        fired = reports.reports_event(row["sentence"], words)
        truth = bool(row["reports"])
        tp, fp, fn, tn = tp + (fired and truth), fp + (fired and not truth), fn + (truth and not fired), \
            tn + (not fired and not truth)
        if args.errors and fired != truth:
            print(f"{'false positive' if fired else 'missed'}: {row['sentence']}")
    print(f"report_cue_sentences: {len(rows)}")
    print(f"report_cue_labelled_reports: {tp + fn}")
    print(f"report_cue_fired: {tp + fp}")
    print(f"report_cue_false_positives: {fp}")
    print(f"report_cue_missed: {fn}")
    print(f"report_cue_precision: {tp / (tp + fp) if tp + fp else float('nan'):.3f}")
    print(f"report_cue_recall: {tp / (tp + fn) if tp + fn else float('nan'):.3f}")
    print(f"report_cue_accuracy: {(tp + tn) / len(rows):.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
