"""What the parts can do, as plain data: the decoders' traits, the packaged backbones, the modalities' traits.

The config's checks read these without importing (or building) a part, so validating a config loads no torch, and
this package imports no other part of pcevolve: it sits below the config. Each part's registry holds the same facts
on the parts themselves; ``tests/test_part_catalogs.py`` holds the two equal.
"""
