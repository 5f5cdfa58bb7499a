"""A package manager's own offline switch, or an npm install of packages named by path, is known to need no
network: in auto mode it runs in the sandbox without a question (the sandbox withholds the network, so a wrong
"offline" fails, never reaches further). Anything that names a URL, or a registry package, still uses the network."""

from __future__ import annotations

import pytest

from framework_core.policy.classifier import classify_command
from framework_core.policy.levels import Level

OFFLINE = [
    ".venv/bin/pip install --no-index dist/x-0.1-py3-none-any.whl",
    "pip install --no-index --find-links=./wheels x",
    "pip install --no-index -f wheels -r requirements.txt",
    "python3 -m pip install --no-index ./x.whl",
    "python -m venv .venv && .venv/bin/pip install --no-index dist/x.whl",
    "npm install ../localpkg",
    "npm i ./vendor/x-1.0.0.tgz --save-dev",
    "npm install file:../localpkg",
    "npm ci --offline",
    "npm install --offline",
    "cargo build --offline",
    "cargo test --frozen",
    "mvn -o -q package",
    "mvn --offline test",
    "gradle build --offline",
    "uv sync --offline",
    "yarn install --offline",
]
NETWORK = [
    "pip install --no-index -f https://example.org/wheels x",
    "pip install --no-index --find-links=https://example.org/w x",
    "pip install x",
    "npm install",
    "npm ci",
    "npm install ../localpkg lodash",
    "npm install https://example.org/a.tgz",
    "npm install --registry https://example.org ../x",
    "cargo build",
    "mvn -q package",
    "uv sync",
]


@pytest.mark.parametrize("cmd", OFFLINE)
def test_known_offline_installs_need_no_network(cmd: str) -> None:
    verdict = classify_command(cmd)
    assert not verdict.network, verdict.reasons
    assert verdict.level == Level.NEEDS_CONFIRM  # still asks in ask mode: it writes and runs build code


@pytest.mark.parametrize("cmd", NETWORK)
def test_installs_from_a_registry_or_url_still_use_the_network(cmd: str) -> None:
    assert classify_command(cmd).network
