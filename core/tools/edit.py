"""The Edit and MultiEdit tools: exact string replacement in a text file.

Matching is literal and byte-faithful: no whitespace or line-ending
normalisation, so an agent can never change more than the text it quoted.
MultiEdit applies its edits in order to the content in memory and plans one
write only if every edit succeeds: all or nothing.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import ConfigDict, Field

from core.errors import ErrorKind, ToolError
from core.paths import Workspace
from core.tools.base import FileWrite, ToolArgs, ToolContext, WritePlan, WriteTool
from core.tools.names import ToolName
from core.tools.write import count_lines, encode_text, load_current


class EditOp(ToolArgs):
    """One replacement: the exact text to find and what to put in its place."""

    model_config = ConfigDict(use_attribute_docstrings=True)

    old_string: str
    """The exact text to replace (empty only to create a new file)."""
    new_string: str
    """The text to put in its place; must differ from old_string."""
    replace_all: bool = False
    """Replace every occurrence instead of requiring exactly one."""


class EditArgs(ToolArgs):
    model_config = ConfigDict(use_attribute_docstrings=True)

    file_path: str
    """The absolute path of the file to modify."""
    old_string: str
    """The exact text to replace (empty only to create a new file)."""
    new_string: str
    """The text to put in its place; must differ from old_string."""
    replace_all: bool = False
    """Replace every occurrence instead of requiring exactly one."""


class MultiEditArgs(ToolArgs):
    model_config = ConfigDict(use_attribute_docstrings=True)

    file_path: str
    """The absolute path of the file to modify."""
    edits: list[EditOp] = Field(min_length=1)
    """Edits applied in order, each to the result of the previous one."""


class Edit(WriteTool[EditArgs]):
    name = ToolName.EDIT
    description = (
        "Replace exact text in a file. old_string must match the file exactly (whitespace, indentation "
        "and line endings included) and occur exactly once, unless replace_all is true. To create a new "
        "file, pass an empty old_string and the content as new_string. Read the file first; if it "
        "changed since you read it, the edit is refused."
    )
    Args = EditArgs
    timeout_s = 30.0

    def summary(self, args: EditArgs, workspace: Workspace) -> str:
        return workspace.describe(args.file_path)

    def plan(self, args: EditArgs, ctx: ToolContext) -> WritePlan:
        return _plan(ctx, args.file_path, [args], multi=False)


class MultiEdit(WriteTool[MultiEditArgs]):
    name = ToolName.MULTI_EDIT
    description = (
        "Make several exact-text replacements in one file in a single step. Edits apply in order, each "
        "to the result of the one before, with the same rules as Edit. If any edit fails, none is "
        "applied and the error names the failing edit. To create a file, give the first edit an empty "
        "old_string."
    )
    Args = MultiEditArgs
    timeout_s = 30.0

    def summary(self, args: MultiEditArgs, workspace: Workspace) -> str:
        n = len(args.edits)
        return f"{workspace.describe(args.file_path)} ({n} edit{'s' if n != 1 else ''})"

    def plan(self, args: MultiEditArgs, ctx: ToolContext) -> WritePlan:
        return _plan(ctx, args.file_path, args.edits, multi=True)


def _plan(ctx: ToolContext, file_path: str, ops: Sequence[EditOp | EditArgs], multi: bool) -> WritePlan:
    path = ctx.workspace.resolve(file_path)
    rel = ctx.workspace.relative(path)
    before = load_current(ctx, path)
    if before is None and ops[0].old_string:
        raise ToolError(ErrorKind.NOT_FOUND, f"{rel} does not exist",
                        "To create it, pass an empty old_string with the content as new_string, or use Write.")
    text = None if before is None else _decode(before, rel)
    replacements = 0
    for index, op in enumerate(ops, 1):
        where = f"edit {index} of {len(ops)}: " if multi else ""
        text, n = _apply(text, op, rel, where)
        replacements += n
    assert text is not None
    after = encode_text(text, "new_string")
    return WritePlan(writes=(FileWrite(path=path, before=before, after=after),),
                     message=_message(rel, before is None, text, len(ops) if multi else 0, replacements))


def _decode(data: bytes, rel: str) -> str:
    try:
        text: str | None = data.decode("utf-8")
    except UnicodeDecodeError:
        text = None
    if text is not None and "\0" not in text:
        return text
    raise ToolError(ErrorKind.INVALID_ARGS, f"{rel} is a binary file, not UTF-8 text; Edit changes text only",
                    "Use Write to replace it whole.")


def _apply(text: str | None, op: EditOp | EditArgs, rel: str, where: str) -> tuple[str, int]:
    old, new = op.old_string, op.new_string
    if old == new:
        raise ToolError(ErrorKind.INVALID_ARGS, f"{where}old_string and new_string are identical; nothing would change",
                        "Pass the text you want in new_string.")
    if text is None or (old == "" and text == ""):
        return new, 1  # creating the file, or filling an empty one
    if old == "":
        raise ToolError(ErrorKind.INVALID_ARGS, f"{where}old_string is empty but {rel} is not empty",
                        "Quote the text to replace, or use Write to replace the whole file.")
    count = text.count(old)
    if count == 0:
        raise ToolError(ErrorKind.NOT_FOUND, f"{where}old_string not found in {rel}", _not_found_hint(text, old))
    if count > 1 and not op.replace_all:
        raise ToolError(ErrorKind.NOT_UNIQUE, f"{where}old_string found {count} times in {rel}",
                        "Pass replace_all to change every occurrence, or add surrounding context to make it unique.")
    return text.replace(old, new, -1 if op.replace_all else 1), count if op.replace_all else 1


def _not_found_hint(text: str, old: str) -> str:
    if "\n" in old and "\r\n" not in old and old.replace("\n", "\r\n") in text:
        return "The file has CRLF line endings; write \\r\\n in old_string."
    return "Read the file again and copy the text exactly, including whitespace and indentation."


def _message(rel: str, created: bool, text: str, edits: int, replacements: int) -> str:
    if created:
        return f"Created {rel} ({count_lines(text)})."
    done = f"{replacements} replacement{'s' if replacements != 1 else ''}"
    if edits:
        return f"Applied {edits} edits to {rel} ({done})."
    return f"Edited {rel}: {done}."
