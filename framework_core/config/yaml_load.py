"""One reader for every YAML (and JSON) file LACA reads at start: config layers, rule files, tools files,
`.mcp.json`.

A start-up file may come with a cloned repository, so it is read defensively: only regular files, under a
size limit, UTF-8 or a clear error naming the file; YAML anchors and aliases may not expand past a node
limit (an "alias bomb" otherwise exhausts memory in whatever walks the data later), and a key given twice
in one mapping is an error (YAML would silently keep the last one). Every error is a ConfigError naming
the file, the line and the key; `load_errors.py` words them, for what is read here and for what the
loaders find in the data afterwards.
"""

from __future__ import annotations

import bisect
import json
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from framework_core.errors import ConfigError
from framework_core.config.load_errors import json_syntax, type_name, yaml_syntax  # noqa: F401 - type_name re-exported

MAX_BYTES = 1_000_000  # a hand-written config, rule or tools file is a few KB
MAX_NODES = 100_000  # values after expanding every alias
MAX_DEPTH = 64


@dataclass
class YamlDoc:
    """A parsed file: `data` as Python values; for line numbers `node` (the composed YAML) or, for a JSON
    file, `lines` (the line of each key path, from the decoder)."""

    path: Path
    data: Any
    node: Any = None
    lines: dict[tuple[str | int, ...], int] | None = None

    def line_of(self, keys: tuple[str | int, ...]) -> int | None:
        """The line of the value at `keys`, or of the deepest part of it that is there."""
        if self.lines is None:
            return line_of(self.node, keys)
        for n in range(len(keys), 0, -1):
            if tuple(keys[:n]) in self.lines:
                return self.lines[tuple(keys[:n])]
        return None


def read_text(path: Path, *, what: str = "config file", max_bytes: int = MAX_BYTES) -> str:
    """A regular file's UTF-8 text, or a ConfigError naming the file and what is wrong with it."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # a FIFO must not block start-up
    except OSError as exc:
        raise ConfigError(f"cannot read this {what}: {exc.strerror}", path=str(path)) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ConfigError(f"this {what} is not a regular file (a FIFO, device or directory); "
                              "point the setting at a file", path=str(path))
        if info.st_size > max_bytes:
            raise ConfigError(f"this {what} is {info.st_size:,} bytes; the limit is {max_bytes:,}. "
                              "Is it the right file?", path=str(path))
        data = os.read(fd, max_bytes + 1)
    except OSError as exc:
        raise ConfigError(f"cannot read this {what}: {exc.strerror}", path=str(path)) from None
    finally:
        os.close(fd)
    if len(data) > max_bytes:  # grew after the stat
        raise ConfigError(f"this {what} is over the limit of {max_bytes:,} bytes", path=str(path))
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise ConfigError(f"this {what} is not UTF-8 text (byte 0x{data[exc.start]:02x}); save it as UTF-8",
                          path=str(path), line=line) from None


def _loader_class() -> type:
    import yaml

    return getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # the C parser when PyYAML was built with libyaml


def parse_yaml(text: str, path: Path, *, max_nodes: int = MAX_NODES) -> YamlDoc:
    """Compose, check the node graph (size, depth, duplicate keys), then construct. Errors name file and line."""
    import yaml

    loader = _loader_class()(text)
    try:
        try:
            node = loader.get_single_node()
        except yaml.YAMLError as exc:
            raise yaml_syntax(path, exc, text) from None
        if node is None:
            return YamlDoc(path, None, None)
        check_graph(node, path, max_nodes=max_nodes)
        try:
            data = loader.construct_document(node)
        except yaml.YAMLError as exc:
            raise yaml_syntax(path, exc) from None
        except RecursionError:
            raise ConfigError("the YAML is nested too deeply", path=str(path)) from None
    finally:
        loader.dispose()
    return YamlDoc(path, data, node)


def load_yaml(path: Path, *, what: str = "config file", max_bytes: int = MAX_BYTES,
              max_nodes: int = MAX_NODES) -> YamlDoc:
    return parse_yaml(read_text(path, what=what, max_bytes=max_bytes), path, max_nodes=max_nodes)


def load_yaml_mapping(path: Path, *, what: str = "config file", max_bytes: int = MAX_BYTES) -> YamlDoc:
    """A file whose top level must be a mapping (an empty file is an empty mapping)."""
    return as_mapping(load_yaml(path, what=what, max_bytes=max_bytes), path)


def as_mapping(doc: YamlDoc, path: Path) -> YamlDoc:
    """`doc` as a mapping: an empty document is an empty mapping; any other top level is a ConfigError."""
    if doc.data is None:
        doc.data = {}
    if not isinstance(doc.data, dict):
        raise ConfigError(f"the top level must be a mapping of keys to values, not {type_name(doc.data)}",
                          path=str(path), line=1)
    return doc


def load_json(path: Path, *, what: str = "JSON file", max_bytes: int = MAX_BYTES) -> Any:
    """A JSON file's data, duplicate keys rejected, errors naming file and line."""
    return load_json_doc(path, what=what, max_bytes=max_bytes).data


def load_json_doc(path: Path, *, what: str = "JSON file", max_bytes: int = MAX_BYTES) -> YamlDoc:
    """A JSON file with the line of each key path, duplicate keys rejected, errors naming file and line."""
    return parse_json_doc(read_text(path, what=what, max_bytes=max_bytes), path)


def parse_json_doc(text: str, path: Path) -> YamlDoc:
    """`load_json_doc` of a text already read (`path` names it in errors)."""
    try:
        data = json.loads(text)
        lines = _JsonLines(text, path).read()
    except json.JSONDecodeError as exc:
        raise json_syntax(path, exc.msg, exc.lineno) from None
    except RecursionError:
        raise ConfigError("the JSON is nested too deeply", path=str(path)) from None
    return YamlDoc(path, data, lines=lines)


class _JsonLines:
    """Walks a JSON text the decoder has accepted, noting the line of every key and list item (and refusing
    a key given twice in one object, which `json.loads` would silently resolve to the last)."""

    _SPACE = re.compile(r"[ \t\n\r]*")

    def __init__(self, text: str, path: Path) -> None:
        self.text, self.path = text, path
        self.breaks = [m.start() for m in re.finditer("\n", text)]
        self.lines: dict[tuple[str | int, ...], int] = {}
        self.decoder = json.JSONDecoder()

    def read(self) -> dict[tuple[str | int, ...], int]:
        self._value(0, ())
        return self.lines

    def _line(self, at: int) -> int:
        return bisect.bisect_left(self.breaks, at) + 1

    def _skip(self, at: int) -> int:
        return self._SPACE.match(self.text, at).end()  # type: ignore[union-attr]  # matches the empty string too

    def _value(self, at: int, keys: tuple[str | int, ...]) -> int:
        at = self._skip(at)
        opener = self.text[at]
        if opener not in "{[":
            return self.decoder.raw_decode(self.text, at)[1]
        at = self._skip(at + 1)
        if self.text[at] in "}]":
            return at + 1
        index = 0
        while True:
            at = self._skip(at)
            if opener == "{":
                key, after = self.decoder.raw_decode(self.text, at)  # the key, a JSON string
                if keys + (key,) in self.lines:
                    raise ConfigError(f"duplicate key '{key}' in one object (first given on line "
                                      f"{self.lines[keys + (key,)]}); keep only one", path=str(self.path),
                                      line=self._line(at), key=key)
                item: str | int = key
                self.lines[keys + (key,)] = self._line(at)
                at = self._skip(after) + 1  # past the ':'
            else:
                item, index = index, index + 1
                self.lines[keys + (item,)] = self._line(at)
            at = self._skip(self._value(at, keys + (item,)))
            if self.text[at] != ",":
                return at + 1
            at += 1


def _children(node: Any) -> list[Any]:
    import yaml

    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def _check_keys(node: Any, path: Path) -> None:
    import yaml

    if not isinstance(node, yaml.MappingNode):
        return
    seen: dict[tuple[str, str], int] = {}
    for key, _ in node.value:
        if not isinstance(key, yaml.ScalarNode) or key.tag == "tag:yaml.org,2002:merge":
            continue
        ident = (key.tag, key.value)
        line = key.start_mark.line + 1
        if ident in seen:
            raise ConfigError(f"duplicate key '{key.value}' (first given on line {seen[ident]}); YAML would "
                              "silently drop the first one. Keep one and merge the two.",
                              path=str(path), line=line, key=key.value)
        seen[ident] = line


def check_graph(root: Any, path: Path, *, max_nodes: int = MAX_NODES, max_depth: int = MAX_DEPTH) -> int:
    """Count the values the document expands to (aliases counted each time they are used), without
    expanding it; reject duplicate keys, recursive aliases and deep nesting. Returns the count."""
    size: dict[int, int] = {}
    open_nodes: set[int] = set()
    stack: list[tuple[Any, int, bool]] = [(root, 0, False)]
    while stack:
        node, depth, closing = stack.pop()
        ident = id(node)
        if closing:
            open_nodes.discard(ident)
            total = 1 + sum(size[id(child)] for child in _children(node))
            if total > max_nodes:
                line = node.start_mark.line + 1
                raise ConfigError(f"the YAML expands to more than {max_nodes:,} values through its anchors and "
                                  "aliases (an alias bomb?); LACA refuses to expand it", path=str(path), line=line)
            size[ident] = total
            continue
        if ident in size:
            continue
        if ident in open_nodes:
            raise ConfigError("an alias refers to the value that contains it (a recursive alias)",
                              path=str(path), line=node.start_mark.line + 1)
        if depth > max_depth:
            raise ConfigError(f"the YAML is nested more than {max_depth} levels deep", path=str(path),
                              line=node.start_mark.line + 1)
        _check_keys(node, path)
        open_nodes.add(ident)
        stack.append((node, depth, True))
        stack.extend((child, depth + 1, False) for child in _children(node) if id(child) not in size)
    return size[id(root)]


def line_of(node: Any, keys: tuple[str | int, ...], *, exact: bool = False) -> int | None:
    """1-based line of a key path inside a composed YAML node. Without `exact`, the line of the deepest
    part found (a missing key is blamed on its parent); with it, None unless the whole path is there."""
    import yaml

    line = None
    for part in keys:
        found = None
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                if isinstance(key, yaml.ScalarNode) and key.value == str(part):
                    found, line = value, key.start_mark.line + 1
                    break
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and 0 <= part < len(node.value):
            found = node.value[part]
            line = found.start_mark.line + 1
        if found is None:
            return None if exact else line
        node = found
    return line


