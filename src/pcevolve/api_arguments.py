"""The Python API's checks of its arguments: a TypeError in the API's terms, naming the argument and saying what it
was given in a few words (never an array's contents)."""

from __future__ import annotations

import os

def check_path(argument: str, value: object, what: str) -> None:
    """A TypeError in the API's terms when ``value`` is not a path (``str`` or ``os.PathLike``)."""
    if not isinstance(value, (str, os.PathLike)) or (isinstance(value, str) and not value.strip()):
        raise TypeError(f"{argument} must be {what}, got {described(value)}")


def described(value: object) -> str:
    """``value`` in a few words for a message: what it is, never its contents at length (an array, a DataFrame)."""
    if isinstance(value, (str, int, float, os.PathLike)) or value is None:
        text = repr(value)
        return text if len(text) <= 60 else text[:57] + "…"
    if isinstance(value, (tuple, list)):
        return f"a {type(value).__name__} of {len(value)}: ({', '.join(_kind(item) for item in value[:4])}" \
               f"{', …' if len(value) > 4 else ''})"
    return _kind(value)


def _kind(value: object) -> str:
    shape = getattr(value, "shape", None)
    return f"{type(value).__name__}{' of shape ' + str(tuple(shape)) if shape is not None else ''}"


def check_data_arguments(**values: object) -> None:
    """A TypeError in the API's terms for each given argument of the wrong kind: ``private`` and ``public`` are a path
    or in-memory data, every other one a path."""
    from pcevolve.in_memory import looks_in_memory

    for argument, value in values.items():
        data = argument in ("private", "public")
        if value is not None and not (data and looks_in_memory(value)):
            check_path(argument, value, "a file or folder path, a pandas DataFrame, a list of dicts or numpy arrays"
                        if data else "a file or folder path")
