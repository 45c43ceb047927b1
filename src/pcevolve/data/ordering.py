"""Orders that people expect when names hold numbers."""

from __future__ import annotations

import re


def natural_key(name: str) -> tuple[tuple[int, int | str], ...]:
    """Sort key that orders embedded numbers numerically: ``"2_a"`` < ``"10_a"``."""
    return tuple((0, int(part)) if part.isdigit() else (1, part) for part in re.split(r"(\d+)", name) if part)
