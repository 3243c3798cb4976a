"""Estimated model cost from configured prices (``telemetry.model_prices``)."""

from __future__ import annotations

from dataclasses import dataclass

from chronomem.errors import ConfigurationError

__all__ = ["ModelPrice", "estimate_cost", "parse_prices", "set_prices"]


@dataclass(frozen=True, slots=True)
class ModelPrice:
    """US dollars per million tokens: uncached input, cached input, output."""

    input: float
    cached_input: float
    output: float


_prices: dict[str, ModelPrice] = {}


def parse_prices(text: str) -> dict[str, ModelPrice]:
    """``"gpt-4o-mini=0.15/0.075/0.6; claude-haiku=0.8/0.08/4"`` → prices by model name."""
    prices: dict[str, ModelPrice] = {}
    for item in filter(None, (part.strip() for part in text.split(";"))):
        model, sep, figures = item.rpartition("=")
        parts = figures.split("/")
        try:
            if not sep or not model.strip() or len(parts) != 3:
                raise ValueError
            values = [float(p) for p in parts]
            if min(values) < 0:
                raise ValueError
        except ValueError:
            raise ConfigurationError(
                f"telemetry.model_prices: {item!r} is not model=input/cached_input/output (dollars per million tokens)"
            ) from None
        prices[model.strip()] = ModelPrice(*values)
    return prices


def set_prices(prices: dict[str, ModelPrice]) -> None:
    """The prices :func:`estimate_cost` uses in this process (set once at start-up)."""
    global _prices
    _prices = dict(prices)


def estimate_cost(model: str, input_tokens: int, cached_input_tokens: int, output_tokens: int) -> float | None:
    """Dollars for one call's tokens, or ``None`` when the model has no configured price."""
    price = _prices.get(model)
    if price is None:
        return None
    uncached = max(input_tokens - cached_input_tokens, 0)
    return (uncached * price.input + cached_input_tokens * price.cached_input + output_tokens * price.output) / 1e6
