"""Conversions of arguments shared by the package's modules."""

from __future__ import annotations

from typing import Any


def shown(value: Any) -> str:
    """A number for a message: a whole number of many digits cut short."""
    digits = str(value)
    return digits if len(digits) <= 24 else f"{digits[:8]}… ({len(digits.lstrip('-'))} digits)"


def as_float(name: str, value: Any) -> float:
    """``float(value)``, or a ValueError naming ``name`` for an integer
    beyond the largest float (where ``float`` raises a bare OverflowError)."""
    try:
        return float(value)
    except OverflowError:
        raise ValueError(f"{name} = {shown(value)}: out of range (beyond the largest float)") from None
