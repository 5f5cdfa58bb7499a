"""The saved sessions of a workspace, as `--resume` and /sessions list them, and the `--resume` pick list."""

from __future__ import annotations

from pathlib import Path

from framework_core.wording import invocation


def format_sessions(workspace: Path, *, numbered: bool = False) -> str:
    import time

    from framework_core.config.dirs import user_data_dir
    from framework_core.core.session import list_sessions

    rows = list_sessions(user_data_dir(), workspace)
    if not rows:
        return f"No sessions yet for {workspace}."
    lines = [f"Sessions for {workspace} (newest first); resume with: {invocation('--resume ID')} "
             "(a unique start or end of the id will do)"]
    for n, s in enumerate(rows[:30], start=1):
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(s.updated))
        head = f"{f'{n:>2}. ' if numbered else '  '}{s.session_id}  {when}  {s.messages:>4} msgs  "
        lines.append(f"{head}first: {s.preview}")
        last = last_user_message(s.path)
        if last and last != s.preview:
            lines.append(f"{' ' * len(head)}last:  {last}")
    return "\n".join(lines)


def last_user_message(path: Path) -> str:
    """The last thing the user said in a transcript, read from its end (transcripts can be large)."""
    from framework_core.config.json_store import loads_bounded
    from framework_core.core.session import MAX_RECORD_DEPTH

    try:
        with open(path, "rb") as fh:
            fh.seek(0, 2)
            fh.seek(max(0, fh.tell() - 256 * 1024))
            tail = fh.read().decode("utf-8", errors="replace").splitlines()
    except OSError:
        return ""
    for line in reversed(tail):
        if '"role": "user"' in line and '"type": "message"' in line:
            try:
                text = loads_bounded(line, max_depth=MAX_RECORD_DEPTH)["message"]["content"]
            except (ValueError, KeyError, TypeError):
                continue
            if isinstance(text, str) and text.strip() and not text.startswith("[LACA:"):
                return " ".join(text.split())[:60]
    return ""


def pick_session(workspace: Path) -> str | None:
    """`--resume` with no id, on a terminal: the sessions, numbered, and a question."""
    from framework_core.config.dirs import user_data_dir
    from framework_core.core.session import list_sessions

    rows = list_sessions(user_data_dir(), workspace)[:30]
    print(format_sessions(workspace, numbered=True))
    if not rows:
        return None
    try:
        answer = input("Resume which? (number or id; Enter cancels) ").strip()
    except (EOFError, KeyboardInterrupt):
        return None
    if not answer:
        return None
    if answer.isdigit() and 1 <= int(answer) <= len(rows):
        return rows[int(answer) - 1].session_id
    return answer
