"""Trust binds a code root: what a trusted server's command line runs is found through its wrappers and
interpreters, and every file of the tree it lives in is digested (no file-count cap, a size bound)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from framework_core.config import trust_runs
from framework_core.config.trust_runs import TOO_LARGE, describe_files, refused, run_files


def files(ws: Path, layout: dict[str, str]) -> None:
    for rel, text in layout.items():
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text(text)


def test_a_script_in_a_folder_brings_its_whole_tree(tmp_path: Path) -> None:
    files(tmp_path, {"tools/server.py": "import lib.helper\n", "tools/lib/helper.py": "x = 1\n",
                     "tools/plugins.json": '{"p": "tools/plug/a.py"}\n', "tools/plug/a.py": "",
                     **{f"tools/m{i}.py": "" for i in range(40)}, "src/app.py": ""})
    found = run_files(["python3", "tools/server.py"], tmp_path)
    assert {"tools/lib/helper.py", "tools/plugins.json", "tools/plug/a.py", "tools/m39.py"} <= set(found)
    assert "src/app.py" not in found
    assert describe_files(found).startswith(" · runs code root tools/ (")


@pytest.mark.parametrize("argv", [["bash", "-c", "exec python tools/server.py"],
                                  ["sh", "-c", "cd . && env A=1 python3 -u tools/server.py"],
                                  ["env", "X=1", "bash", "-c", "exec python -m tools.server"]])
def test_wrappers_are_read_as_the_command_they_run(tmp_path: Path, argv: list[str]) -> None:
    files(tmp_path, {"tools/server.py": "", "tools/lib/helper.py": ""})
    assert "tools/lib/helper.py" in run_files(argv, tmp_path)


def test_a_top_level_run_script_brings_what_it_sources_and_runs(tmp_path: Path) -> None:
    files(tmp_path, {"run.sh": "#!/bin/sh\n. scripts/env.sh\nexec python3 server.py\n", "scripts/env.sh": "",
                     "scripts/more.sh": "", "server.py": "import lib\nfrom util import x\n", "lib/__init__.py": "",
                     "lib/deep/mod.py": "", "util.py": "", "README.md": ""})
    found = run_files(["./run.sh"], tmp_path)
    assert {"run.sh", "scripts/env.sh", "scripts/more.sh", "server.py", "lib/deep/mod.py", "util.py"} <= set(found)
    assert "README.md" not in found


def test_npx_resolves_to_the_workspace_node_modules_package(tmp_path: Path) -> None:
    files(tmp_path, {"node_modules/srv-pkg/bin.js": "require('dep')\n", "node_modules/srv-pkg/lib/x.js": "",
                     "node_modules/srv-pkg/package.json": "{}", "node_modules/other/index.js": ""})
    (tmp_path / "node_modules" / ".bin").mkdir()
    os.symlink("../srv-pkg/bin.js", tmp_path / "node_modules" / ".bin" / "srv-pkg")
    found = run_files(["npx", "-y", "srv-pkg"], tmp_path)
    assert {"node_modules/srv-pkg/bin.js", "node_modules/srv-pkg/lib/x.js"} <= set(found)
    assert "node_modules/other/index.js" not in found


def test_a_root_over_the_bound_cannot_be_trusted_and_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(trust_runs, "MAX_ROOT_FILES", 5)
    files(tmp_path, {f"tools/m{i}.py": "" for i in range(8)})
    files(tmp_path, {"tools/server.py": ""})
    found = run_files(["python3", "tools/server.py"], tmp_path)
    assert found == {"tools/": TOO_LARGE} and refused(found) == ["tools/"]
    assert "TOO LARGE to trust" in describe_files(found)


def test_nothing_outside_the_workspace_and_no_symlink_out(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    files(tmp_path, {"outside/secret.py": "", "ws/tools/server.py": ""})
    os.symlink(tmp_path / "outside", ws / "tools" / "link")
    found = run_files(["python3", "tools/server.py", "../outside/secret.py"], ws)
    assert set(found) == {"tools/server.py"}
