from __future__ import annotations

import os
import signal
import sys
from pathlib import Path
from typing import Callable, Iterator

import pexpect
import pytest

from tests.fakes.anthropic_server import FakeAnthropicServer
from tests.fakes.openai_server import FakeOpenAIServer

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def fake_openai() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as server:
        yield server


@pytest.fixture(scope="module")
def fake_anthropic() -> Iterator[FakeAnthropicServer]:
    with FakeAnthropicServer() as server:
        yield server


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> Iterator[None]:
    """Keep each phase's report on the test, so the `spawn` fixture knows at teardown whether the test failed."""
    report = yield
    setattr(item, f"report_{report.when}", report)
    return report


def _stacks_of(child: pexpect.spawn) -> str:
    """A LACA that a failed test left running: its threads' stacks (faulthandler, on SIGABRT) and its last output,
    so a hang says where it hung."""
    try:
        os.kill(child.pid, signal.SIGABRT)
        child.expect(pexpect.EOF, timeout=5)
    except (OSError, pexpect.ExceptionPexpect):
        pass
    return str(child.before)[-20000:]


@pytest.fixture
def spawn(request: pytest.FixtureRequest, workspace: Path, isolated_env: Path, fake_openai: FakeOpenAIServer,
          fake_anthropic: FakeAnthropicServer) -> Iterator[Callable[..., pexpect.spawn]]:
    """LACA in a pseudo-terminal. The typeahead guard is off: a key sent once a question is on screen reaches it
    (nothing on screen says when a guard's time is up; tests/unit/ui/test_approval_prompt.py tests the guard)."""
    children: list[pexpect.spawn] = []
    fake_openai._queue.clear()  # each test scripts its own replies
    fake_anthropic._queue.clear()

    def start(*args: str, env: dict[str, str] | None = None, provider: str = "openai",
              no_mcp: bool = True) -> pexpect.spawn:
        full = dict(os.environ)
        full.update({"OPENAI_BASE_URL": fake_openai.base_url, "OPENAI_API_KEY": "k",
                     "ANTHROPIC_BASE_URL": fake_anthropic.base_url, "ANTHROPIC_API_KEY": "k", "TERM": "xterm",
                     "LACA_TYPEAHEAD_GUARD_S": "0", "COLUMNS": "120", "LINES": "40",
                     "PROMPT_TOOLKIT_NO_CPR": "1",  # pexpect does not answer cursor position requests
                     "PYTHONFAULTHANDLER": "1"})  # a failed test's LACA shows its threads' stacks (_stacks_of)
        full.pop("NO_COLOR", None)
        full.update(env or {})
        chosen = ["--provider", provider] if provider else []  # "": the provider LACA picks itself
        child = pexpect.spawn(sys.executable, [str(ROOT / "run_framework.py"), *chosen,
                                                *(["--no-mcp"] if no_mcp else []), *args],
                              cwd=str(workspace), env=full, encoding="utf-8", timeout=20, dimensions=(40, 120))
        child.linesep = "\r"  # Enter, as a terminal sends it (a bare \n is Ctrl-J, which adds a line)
        children.append(child)
        return child

    yield start
    failed = getattr(request.node, "report_call", None)
    for child in children:
        if child.isalive() and failed is not None and failed.failed:
            sys.stderr.write(f"\n--- LACA (pid {child.pid}) left running by the failed test: its stacks ---\n"
                             + _stacks_of(child) + "\n")
        if child.isalive():
            child.terminate(force=True)
