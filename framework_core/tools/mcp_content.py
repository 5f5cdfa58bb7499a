"""MCP tool results as the model can use them: text, images for the provider, notes for everything else.

Text is text. Images in a format both wire APIs accept (PNG, JPEG, GIF, WebP, checked by their bytes, not
only by the declared type) are kept within a size cap, for the provider's image blocks (or a note, for a model
that takes no images: `adapters/tool_images.py` decides per request). Audio and binary resources
become a short note. A resource link keeps its URI, name, description and type. `structuredContent` is used
only when there is no content (the spec asks servers to repeat it as text), so a result is counted once.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass, field
from typing import Any

from framework_core.estimate import base64_size
from framework_core.wording import size_words

IMAGE_MAX_BYTES = 1_500_000  # per image, decoded
MAX_IMAGES = 4  # per result
EXTENSIONS = {"image/png": ".png", "image/jpeg": ".jpg", "image/gif": ".gif", "image/webp": ".webp"}
_MAGIC = ((b"\x89PNG\r\n\x1a\n", "image/png"), (b"\xff\xd8\xff", "image/jpeg"), (b"GIF87a", "image/gif"),
          (b"GIF89a", "image/gif"))


@dataclass
class Converted:
    text: str
    images: list[dict[str, str]] = field(default_factory=list)  # {"mime_type": ..., "data": base64}


def convert(content: list[Any], structured: Any = None) -> Converted:
    out = Converted("")
    parts = [_part(item, out) for item in content or []]
    if not parts and structured is not None:
        parts = [json.dumps(structured, ensure_ascii=False, default=str)]
    out.text = "\n".join(parts)
    return out


def _part(item: Any, out: Converted) -> str:
    kind = getattr(item, "type", "")
    if kind == "text":
        return str(item.text)
    if kind == "image":
        return _image(str(item.data), str(item.mime_type), out)
    if kind == "audio":
        size = size_words(base64_size(item.data))
        return f"[audio {item.mime_type}, {size}: not sent (the model's API takes no audio in tool results)]"
    if kind == "resource_link":
        return _link(item)
    if kind == "resource":
        return embedded_text(item.resource)
    return f"[{kind or 'unknown'} content: not shown]"


def _image(data: str, declared: str, out: Converted) -> str:
    try:
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return f"[image {declared}: not attached, its data is not valid base64]"
    mime = _sniff(raw)
    if mime is None:
        return f"[image {declared}, {size_words(len(raw))}: not attached (only PNG, JPEG, GIF and WebP can be sent)]"
    if len(raw) > IMAGE_MAX_BYTES:
        return f"[image {mime}, {size_words(len(raw))}: not attached (over the {size_words(IMAGE_MAX_BYTES)} limit)]"
    if len(out.images) >= MAX_IMAGES:
        return f"[image {mime}, {size_words(len(raw))}: not attached (at most {MAX_IMAGES} images per result)]"
    out.images.append({"mime_type": mime, "data": data})
    return f"[image {len(out.images)}: {mime}, {size_words(len(raw))}]"


def _sniff(raw: bytes) -> str | None:
    if raw[:4] == b"RIFF" and raw[8:12] == b"WEBP":
        return "image/webp"
    return next((mime for magic, mime in _MAGIC if raw.startswith(magic)), None)


def _link(item: Any) -> str:
    title = getattr(item, "title", None)
    head = f"[resource link] {item.name}" + (f" ({title})" if title and title != item.name else "")
    lines = [head, f"  uri: {item.uri}"]
    if getattr(item, "description", None):
        lines.append(f"  description: {item.description}")
    if getattr(item, "mime_type", None) or getattr(item, "size", None) is not None:
        size = f", {size_words(item.size)}" if getattr(item, "size", None) is not None else ""
        lines.append(f"  type: {item.mime_type or 'unknown'}{size}")
    return "\n".join(lines)


def embedded_text(res: Any) -> str:
    mime = getattr(res, "mime_type", None)
    label = f"{res.uri}" + (f" ({mime})" if mime else "")
    text = getattr(res, "text", None)
    if text is not None:
        return f"[resource {label}]\n{text}"
    return f"[binary resource {label}, {size_words(base64_size(getattr(res, 'blob', '')))}: not shown]"


def resource_contents(contents: list[Any]) -> Converted:
    """What `resources/read` returned, as a result is converted: text as text (each part headed by its URI when
    there are several), images as images, any other binary part a short note."""
    out = Converted("")
    many = len(contents or []) > 1
    parts = []
    for res in contents or []:
        text = getattr(res, "text", None)
        mime = getattr(res, "mime_type", None) or ""
        if text is not None:
            parts.append(f"[resource {res.uri}]\n{text}" if many else str(text))
        elif mime.startswith("image/"):
            parts.append(_image(str(getattr(res, "blob", "")), mime, out))
        else:
            parts.append(embedded_text(res))
    out.text = "\n".join(parts)
    return out
