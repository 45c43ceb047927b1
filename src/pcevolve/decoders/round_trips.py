"""The two kinds of decoder, by what their decode → re-encode round trip is: each kind owns its delivery half.

Delivery decodes the search's samples and needs the encoder's view of them; the search predicts that view for every
candidate (:func:`pcevolve.search.roundtrip.round_trip_model`, which reads only :meth:`pool_encodings`). So that
neither asks which decoder it holds:

* :class:`RetrievalRoundTrip` — the decoder returns samples of an encoded pool (``encodings``): the round trip
  is exact (the returned sample's stored encoding), delivery needs no encoder pass, and the pool can be split into
  per-class territories. Nothing is trained, so nothing can be trained under DP.
* :class:`LearnedRoundTrip` — the decoder generates samples (no pool): the search fits an affine surrogate on real
  public round trips, and delivery re-encodes what it decoded. It can be fine-tuned under DP-SGD.

Both are post-processing of the release and of public data.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from pcevolve.encoders.reencode import reencode_check

if TYPE_CHECKING:
    from pcevolve.decoders.territories import ClassTerritories


class RetrievalRoundTrip:
    """Round trip of a decoder with stored ``encodings`` and ``decode_known`` (see :class:`KnownEncodings`)."""

    trainable_under_dp: ClassVar[bool] = False
    encodings: np.ndarray
    #: What the last ``decode_and_encode`` did beyond retrieval, for the delivery summary (public facts only).
    delivery_notes: Any = MappingProxyType({})

    def pool_encodings(self) -> np.ndarray | None:
        """The encodings of every sample the decoder can return (what class territories split)."""
        return self.encodings

    def pool_samples(self) -> np.ndarray | None:
        """The samples themselves, row for row with :meth:`pool_encodings` (what a pixel labeller reads)."""
        return self.samples  # type: ignore[attr-defined]

    def decode_and_encode(self, features: np.ndarray, labels: np.ndarray, *, encoder: Any,
                          territories: ClassTerritories | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Samples for delivery (no pool sample twice while it lasts) and their stored encodings."""
        return self.decode_known(features, labels, distinct=True, territories=territories)  # type: ignore[attr-defined]


class LearnedRoundTrip:
    """Round trip of a generating decoder: a surrogate for the search, a real re-encode for delivery."""

    trainable_under_dp: ClassVar[bool] = True
    delivery_notes: Any = MappingProxyType({})

    def pool_encodings(self) -> np.ndarray | None:
        """None: a generator has no pool to split into territories."""
        return None

    def pool_samples(self) -> np.ndarray | None:
        """None: a generator has no pool."""
        return None

    def decode_and_encode(self, features: np.ndarray, labels: np.ndarray, *, encoder: Any,
                          territories: ClassTerritories | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Decoded samples and the encoder's features of them."""
        if territories is not None:
            raise ValueError("class territories split a retrieval decoder's pool; a generator has none")
        samples = self.decode(features, labels)  # type: ignore[attr-defined]
        return samples, reencode_check(encoder, samples, features).reencoded
