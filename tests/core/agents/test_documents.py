"""Scripts in YAML are read strictly: an alias bomb or deep nesting is refused at once, in one line."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from core.agents.documents import MAX_DEPTH, DocumentError, load_yaml
from core.agents.script import load_script

BOMB = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join([f'*{chr(97 + i)}'] * 9)}]\n" for i in range(9))


def test_an_alias_bomb_script_is_refused_before_it_is_expanded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    script = tmp_path / "bomb.yaml"
    script.write_text(BOMB)
    built: list[yaml.Node] = []  # what YAML made into Python objects: safe_load spends minutes expanding there
    construct = yaml.constructor.BaseConstructor.construct_document
    monkeypatch.setattr(yaml.constructor.BaseConstructor, "construct_document",
                        lambda loader, node: (built.append(node), construct(loader, node))[1])
    with pytest.raises(DocumentError, match="may not use YAML aliases or anchors .*line 1"):
        load_script(script)
    assert built == []  # refused at the first anchor while the text was read, before anything was built


def test_nesting_past_the_limit_is_refused_and_within_it_read(tmp_path: Path) -> None:
    deep = tmp_path / "deep.yaml"
    deep.write_text("steps: " + "[" * 5_000 + "]" * 5_000 + "\n")
    with pytest.raises(DocumentError, match=f"nests more than {MAX_DEPTH} levels"):
        load_script(deep)
    assert load_yaml("a: [[1, 2], {b: c}]\n") == {"a": [[1, 2], {"b": "c"}]}


def test_a_script_that_is_not_yaml_is_one_clear_line(tmp_path: Path) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text("steps: [\n")
    with pytest.raises(DocumentError, match=f"the script {broken} is not valid YAML"):
        load_script(broken)
