"""/last names where a result's images were saved (a text-only model read a note; the user opens the file)."""

from __future__ import annotations

from framework_core.ui.more_commands import _full_output


def test_last_lists_the_saved_images_after_the_text() -> None:
    data = {"content": "[image 1: image/png, 73 bytes]",
            "images": [{"mime_type": "image/png", "data": "iVBOR", "path": "/s/mcp-image-1.png"}]}
    assert _full_output(data) == "[image 1: image/png, 73 bytes]\nimage 1: image/png, saved as /s/mcp-image-1.png"
