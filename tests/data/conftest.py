"""Fixtures of the data tests."""

from __future__ import annotations

from pathlib import Path

import pytest
from data_helpers import make_class_folders


@pytest.fixture
def good_folder(tmp_path: Path) -> Path:
    return make_class_folders(tmp_path / "good", {"cat": 3, "dog": 4})
