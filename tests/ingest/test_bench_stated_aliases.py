"""The resolution benchmark's scripted model reads only aliases its text states (bench/resolution.py)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest


def _bench() -> ModuleType:
    path = Path(__file__).resolve().parents[2] / "bench" / "resolution.py"
    spec = importlib.util.spec_from_file_location("bench_resolution", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


stated_aliases = _bench().stated_aliases


@pytest.mark.parametrize(("name", "text", "aliases"), [
    ("International Business Machines", "International Business Machines (IBM) opened a lab.", ["IBM"]),
    ("IBM", "International Business Machines (IBM) opened a lab.", ["International Business Machines"]),
    ("Robert Smith", 'We met Robert "Bob" Smith.', ["Bob"]),
    ("NYC", "She moved to New York City, or NYC, last year.", ["New York City"]),
    ("X Corp.", "X Corp. (formerly Twitter) changed its logo.", ["Twitter"]),
    ("paracetamol", "Acetaminophen, known as paracetamol in Europe, helped.", ["Acetaminophen"]),
])
def test_an_alias_stated_next_to_the_name_is_read(name: str, text: str, aliases: list[str]) -> None:
    assert stated_aliases(name, text) == aliases


@pytest.mark.parametrize(("name", "text"), [
    ("Jane Doe", "Jane Doe, formerly of Google, joined Acme."),
    ("Apple", "Apple (the computer company) settled."),
    ("Robert Smith", "Robert Smith met Bob at the gym."),
    ("Paris", "We flew to Paris or London."),
    ("NYC", "Today's notes mention NYC again."),
])
def test_nothing_the_text_does_not_state_is_an_alias(name: str, text: str) -> None:
    assert stated_aliases(name, text) == []
