"""Context loading: FRAMEWORK_CONTEXT.md referencing 1,000 documents, 10 MB in all."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from benchmarks.common import Row, absolute_row


def measure() -> list[Row]:
    from framework_core.dcm import DynamicContextManager

    root = Path(tempfile.mkdtemp(prefix="laca-ctx-"))
    (root / "docs").mkdir()
    body = ("Lorem ipsum dolor sit amet, consectetur adipiscing elit. " * 180)[:10_000]
    lines = ["## Documents"]
    for i in range(1000):
        (root / "docs" / f"d{i}.md").write_text(body)
        lines.append(f"doc{i}: @./docs/d{i}.md")
    (root / "FRAMEWORK_CONTEXT.md").write_text("\n".join(lines) + "\n")
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        dcm = DynamicContextManager(str(root / "FRAMEWORK_CONTEXT.md"))
        best = min(best, time.perf_counter() - start)
    assert len(dcm.documents()) == 1000
    return [absolute_row("context load, 1,000 docs / 10 MB", best * 1000, 200, "ms")]


if __name__ == "__main__":
    from benchmarks.common import format_table

    print(format_table(measure()))
