"""Durable file output: every file pcevolve writes goes through here."""

from pcevolve.io.atomic import (
    TargetExistsError,
    append_jsonl,
    atomic_directory,
    atomic_write_bytes,
    atomic_write_json,
    atomic_write_npz,
    atomic_write_text,
    private_folder,
    private_tree,
    read_json,
    read_jsonl,
    refuse_existing,
    refuse_file_parent,
    shared_tree,
)

__all__ = [
    "TargetExistsError",
    "append_jsonl",
    "atomic_directory",
    "atomic_write_bytes",
    "atomic_write_json",
    "atomic_write_npz",
    "atomic_write_text",
    "private_folder",
    "private_tree",
    "read_json",
    "read_jsonl",
    "refuse_existing",
    "refuse_file_parent",
    "shared_tree",
]
