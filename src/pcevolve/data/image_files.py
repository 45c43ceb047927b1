"""Reading image files into one uint8 array, with every problem collected.

Rules (the folder readers build on these):

* Supported files: ``.png``, ``.jpg``, ``.jpeg`` (any case). Hidden files (``.DS_Store``,
  ``._x.png``) and OS clutter (``Thumbs.db``, ``desktop.ini``) are ignored; any other
  file is reported as a problem rather than skipped, so data is never dropped silently.
* A zero-byte, unidentifiable, truncated or corrupt image is a problem naming the file.
* Size: with a declared ``size`` every image is resized to ``size x size`` (LANCZOS;
  the aspect ratio is not kept). Without one, all images must share one size; files
  that differ from the most common size are problems.
* Mode: images are converted to the declared ``mode`` (``"L"`` or ``"RGB"``), or, when
  none is declared, to the mode most files have. If the files had *different* modes the
  conversion is announced with a :class:`~pcevolve.data.errors.DataWarning` naming the
  converted files; converting a uniform folder to a declared mode is only logged.
* 16-bit greyscale is reduced to 8 bits by keeping the high byte (PIL's own conversion clips).
* EXIF orientation (JPEG, or a PNG's EXIF) is applied, so a photo reads the way viewers show it.
"""

from __future__ import annotations

import logging
import warnings
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
from PIL import Image, ImageOps, UnidentifiedImageError

from pcevolve.data.errors import DataProblem, DataWarning, name_some

logger = logging.getLogger(__name__)

ImageMode = Literal["L", "RGB"]
IMAGE_MODES: tuple[str, ...] = ("L", "RGB")
IMAGE_EXTENSIONS: tuple[str, ...] = (".png", ".jpg", ".jpeg")
IGNORED_FILE_NAMES = frozenset({"Thumbs.db", "desktop.ini"})
RESAMPLE = Image.Resampling.LANCZOS

# Native PIL modes that carry no colour; everything else is read as RGB when no mode is declared.
_GREY_MODES = frozenset({"1", "L", "LA", "La", "I", "I;16", "I;16B", "I;16L", "I;16N", "F"})
_ROTATING_ORIENTATIONS = frozenset({5, 6, 7, 8})  # EXIF orientations that swap width and height


@dataclass(frozen=True)
class ImageInfo:
    """What an image file's header says (its pixels are not decoded).

    Attributes:
        path: The file.
        width: Width in pixels, after EXIF orientation.
        height: Height in pixels, after EXIF orientation.
        mode: The native PIL mode (``"L"``, ``"RGB"``, ``"RGBA"``, ``"P"``, ...).
    """

    path: Path
    width: int
    height: int
    mode: str

    @property
    def size_text(self) -> str:
        """``"28x28"`` (width x height)."""
        return f"{self.width}x{self.height}"


def is_ignored(name: str) -> bool:
    """Hidden files and OS clutter, skipped without a problem."""
    return name.startswith(".") or name in IGNORED_FILE_NAMES


def is_image_name(name: str) -> bool:
    """Whether the file name has a supported image extension."""
    return name.lower().endswith(IMAGE_EXTENSIONS)


def list_folder(folder: Path) -> tuple[list[Path], list[Path], list[DataProblem]]:
    """Sort a folder's entries into image files, subfolders and unsupported files.

    Returns:
        ``(images, subfolders, problems)``; both lists sorted by name; one problem
        per non-hidden file that is not a supported image.
    """
    images: list[Path] = []
    folders: list[Path] = []
    problems: list[DataProblem] = []
    for entry in sorted(folder.iterdir(), key=lambda p: p.name):
        if is_ignored(entry.name):
            continue
        if entry.is_dir():
            folders.append(entry)
        elif is_image_name(entry.name):
            images.append(entry)
        else:
            suffix = entry.suffix or "(no extension)"
            problems.append(
                DataProblem(str(entry), f"unsupported file type {suffix}; expected {', '.join(IMAGE_EXTENSIONS)}",
                            kind=f"unsupported file type; expected {', '.join(IMAGE_EXTENSIONS)}")
            )
    return images, folders, problems


def inspect_image(path: str | Path) -> ImageInfo | DataProblem:
    """Read an image's header: its size and native mode, or the problem that prevents it."""
    return _open(Path(path), decode=False)[0]


#: Decoded images the header pass may keep for the decoding pass, in bytes of native pixels: each file is then
#: opened once instead of twice, which makes reading a folder markedly faster (docs/performance.md); larger sets of
#: larger images are opened again, so memory stays bounded.
_KEPT_PIXEL_BYTES = 512 * 2**20


def _open(path: Path, *, decode: bool) -> tuple[ImageInfo | DataProblem, Image.Image | Exception | None]:
    """The header's :class:`ImageInfo` (or the problem that prevents reading it) and, when ``decode``, the decoded
    image (EXIF orientation applied) or the exception decoding raised."""
    try:
        if path.stat().st_size == 0:
            return DataProblem(str(path), "empty file (0 bytes)"), None
        with Image.open(path) as image:
            width, height = image.size
            if _may_be_oriented(image) and image.getexif().get(0x0112) in _ROTATING_ORIENTATIONS:
                width, height = height, width
            info = ImageInfo(path=path, width=width, height=height, mode=image.mode)
            if not decode:
                return info, None
            try:
                image.load()  # decodes fully: a truncated file fails here, not later
                # After loading: a PNG may keep its EXIF after the pixels, which the header above could not see,
                # so the size is the decoded image's.
                turned = ImageOps.exif_transpose(image) if _may_be_oriented(image) else image
                return ImageInfo(path=path, width=turned.width, height=turned.height, mode=image.mode), turned
            except Exception as exc:  # noqa: BLE001 -- reported as this file's decoding problem
                return info, exc
    except UnidentifiedImageError:
        return DataProblem(str(path), "not a readable image (unknown or corrupt format)"), None
    except Exception as exc:  # noqa: BLE001 -- any reader failure is a problem with this file
        return DataProblem(str(path), f"cannot read image: {exc}", kind="cannot read image"), None


def _may_be_oriented(image: Image.Image) -> bool:
    """Whether the image carries anything PIL reads an orientation from (EXIF, a PNG's raw EXIF text, XMP);
    others skip :func:`ImageOps.exif_transpose`, which would only copy them."""
    return image.format == "JPEG" or any(key in image.info for key in _ORIENTATION_SOURCES)


_ORIENTATION_SOURCES = ("exif", "Raw profile type exif", "XML:com.adobe.xmp", "xmp")


def _decode(info: ImageInfo, decoded: Image.Image | Exception | None, *, mode: str, size: int | None) -> np.ndarray:
    """``info``'s pixels in ``mode`` (at ``size`` if given): from the header pass's ``decoded`` image, else read
    again; raises what decoding raised."""
    if isinstance(decoded, Exception):
        raise decoded
    if decoded is None:
        decoded = _open(info.path, decode=True)[1]
        if not isinstance(decoded, Image.Image):
            raise decoded if isinstance(decoded, Exception) else OSError("the file changed while it was read")
    image = decoded
    if image.mode.startswith("I;16"):
        # PIL's own 16-bit -> 8-bit conversion clips at 255; keep the high byte instead.
        image = Image.fromarray((np.asarray(image, dtype=np.uint16) >> 8).astype(np.uint8))
    if image.mode != mode:
        image = image.convert(mode)
    if size is not None and image.size != (size, size):
        image = image.resize((size, size), RESAMPLE)
    return np.asarray(image, dtype=np.uint8)


def load_images(
    paths: Sequence[Path],
    *,
    size: int | None = None,
    mode: ImageMode | None = None,
) -> tuple[np.ndarray | None, list[DataProblem]]:
    """Decode image files into one ``uint8`` array, collecting every problem.

    Args:
        paths: Image files, in the order the samples should have.
        size: Resize every image to ``size x size``; ``None`` keeps native sizes,
            which must then all be equal.
        mode: ``"L"`` or ``"RGB"``; ``None`` picks the mode most files have.

    Returns:
        ``(samples, problems)``: ``samples`` is ``(N, H, W)`` for ``"L"`` or ``(N, H, W, 3)``
        for ``"RGB"`` when there are no problems, else ``None``.

    Warns:
        DataWarning: the files had different modes; names those converted.
    """
    if mode is not None and mode not in IMAGE_MODES:
        raise ValueError(f"mode must be one of {IMAGE_MODES}, got {mode!r}")
    if size is not None and size < 1:
        raise ValueError(f"size must be positive, got {size}")
    infos: list[ImageInfo] = []
    decoded: list[Image.Image | Exception | None] = []
    problems: list[DataProblem] = []
    room = _KEPT_PIXEL_BYTES
    for path in paths:
        result, image = _open(Path(path), decode=room > 0)
        if isinstance(result, DataProblem):
            problems.append(result)
            continue
        if isinstance(image, Image.Image):
            room -= image.width * image.height * len(image.getbands())
        infos.append(result)
        decoded.append(image)

    native_modes = Counter(info.mode for info in infos)
    target = mode or _majority_mode(native_modes)
    converted = [info for info in infos if info.mode != target]
    if converted and len(native_modes) > 1:
        warnings.warn(
            f"images have mixed modes ({', '.join(f'{m}: {n}' for m, n in sorted(native_modes.items()))}); "
            f"converted {len(converted)} to {target}: "
            + name_some(f"{info.path} ({info.mode})" for info in converted),
            DataWarning,
            stacklevel=3,
        )
    elif converted:
        logger.info("converting %d images from %s to %s", len(converted), converted[0].mode, target)

    if size is not None:
        width, height = size, size
    elif infos:
        (width, height), _ = Counter((info.width, info.height) for info in infos).most_common(1)[0]
        for info in infos:
            if (info.width, info.height) != (width, height):
                problems.append(_odd_size(info.path, info.size_text, width, height))
    else:
        width, height = 0, 0

    shape = (len(paths), height, width) if target == "L" else (len(paths), height, width, 3)
    samples = np.empty(shape, dtype=np.uint8) if not problems else None
    # Every file is decoded even once a problem is known, so truncation is reported too.
    for index, info in enumerate(infos):
        try:
            pixels = _decode(info, decoded[index], mode=target, size=size)
        except Exception as exc:  # noqa: BLE001
            problems.append(DataProblem(str(info.path), f"cannot decode image, truncated or corrupt: {exc}",
                                        kind="cannot decode image, truncated or corrupt"))
            samples = None
            continue
        finally:
            decoded[index] = None  # frees the kept image
        if (info.height, info.width) == (height, width) != pixels.shape[:2]:
            # The header's size was the common one, the pixels' is not: only a file re-read after the header pass
            # (a PNG whose EXIF orientation follows its pixels) gets here; other odd sizes are already problems.
            turned = f"{pixels.shape[1]}x{pixels.shape[0]} once its EXIF orientation is applied"
            problems.append(_odd_size(info.path, turned, width, height))
            samples = None
        elif samples is not None:
            samples[index] = pixels
    problems.sort(key=lambda problem: problem.path)
    return (samples if not problems else None), problems


def _odd_size(path: Path, found: str, width: int, height: int) -> DataProblem:
    """The problem of an image whose size (``found``, e.g. ``"28x30"``) is not the common ``width`` x ``height``."""
    fix = "declare a size (--size) to resize all images"
    return DataProblem(str(path), f"image is {found} but most images are {width}x{height}; {fix}",
                       kind=f"image size is not the most common {width}x{height}; {fix}")


def _majority_mode(native_modes: Counter[str]) -> str:
    grey = sum(count for native, count in native_modes.items() if native in _GREY_MODES)
    colour = sum(native_modes.values()) - grey
    return "L" if grey > colour else "RGB"


def describe_images(paths: Sequence[str | Path]) -> list[ImageInfo]:
    """Header information of readable images (unreadable ones are left out)."""
    infos = (inspect_image(path) for path in paths)
    return [info for info in infos if isinstance(info, ImageInfo)]
