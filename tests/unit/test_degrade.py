"""A home that cannot be written: LACA starts in memory and says so once; nothing raises."""

from __future__ import annotations

from pathlib import Path

from prompt_toolkit.history import InMemoryHistory

from framework_core.ui.input_history import SafeFileHistory, make_history


def test_input_history_in_memory_when_the_data_dir_cannot_be_made(tmp_path: Path) -> None:
    blocker = tmp_path / "data"
    blocker.write_text("a file where the folder should be")
    assert isinstance(make_history(blocker), InMemoryHistory)


def test_input_history_write_error_warns_once_and_goes_on(tmp_path: Path) -> None:
    path = tmp_path / "input_history"
    path.symlink_to("/dev/full")  # every write: ENOSPC
    history = SafeFileHistory(str(path))
    history.store_string("first")
    history.store_string("second")
    warning = history.take_warning()
    assert warning and "No space left on device" in warning and "memory only" in warning
    assert history.take_warning() is None


def test_mcp_manager_starts_without_a_writable_log_folder(tmp_path: Path) -> None:
    from framework_core.tools.base import ToolRegistry
    from framework_core.tools.mcp import McpManager

    blocker = tmp_path / "data"
    blocker.write_text("not a folder")
    manager = McpManager({}, ToolRegistry(), blocker / "logs", tmp_path)
    assert manager.log_dir.is_dir() and manager.log_dir != blocker / "logs"
