"""MkDocs hooks: the reference pages are generated from the code when the site is built, so they
cannot drift from it.

In a page, the line ``<!-- generated: cli -->`` becomes the command-line reference (every
command and option, from the typer app), and ``<!-- generated: fields -->`` the table of JSONL
fields (from :mod:`warcdeboil.output.schema`), with their Parquet column types
(:func:`warcdeboil.output.parquet.arrow_name`). ``tests/test_docs.py`` checks both.
"""

from __future__ import annotations

import re
from typing import Any

import typer.main

MARKERS = {"cli": "<!-- generated: cli -->", "fields": "<!-- generated: fields -->"}


def _cell(text: str) -> str:
    """Text for a Markdown table cell: typer's markup escapes undone, pipes escaped."""
    text = text.replace("\\[", "[")
    return re.sub(r"\s+", " ", text).replace("|", "\\|").strip()


# Duck-typed: typer builds its commands with click, or with the copy of click it carries.
Command = Any
Parameter = Any


def _param_row(param: Parameter) -> str:
    if param.param_type_name == "argument":
        name = f"`{param.name.upper()}`" + ("..." if param.nargs == -1 else "")
    else:
        names = [*param.opts, *param.secondary_opts]
        name = ", ".join(f"`{n}`" for n in names)
    if hasattr(param.type, "choices"):
        kind = " \\| ".join(f"`{c}`" for c in param.type.choices)
    elif getattr(param, "is_flag", False):
        kind = "flag"
    elif getattr(param, "metavar", None):
        kind = _cell(param.metavar.strip("<>")).replace("\\|", " \\| ")
    else:
        kind = _kind(param.type)
    default = param.default
    if getattr(param, "is_flag", False) or default in (None, (), []):
        shown = "required" if param.required else ""
    else:
        shown = f"`{getattr(default, 'value', default)}`"
    return f"| {name} | {kind} | {shown} | {_cell(getattr(param, 'help', None) or '')} |"


def _kind(of: Any) -> str:
    """A parameter's type in words, with its bounds."""
    name = {"int range": "integer", "float range": "number", "integer": "integer",
            "float": "number", "path": "path"}.get(of.name, "text")
    low, high = getattr(of, "min", None), getattr(of, "max", None)
    if low is not None and high is not None:
        return f"{name}, {low} to {high}"
    if low is not None:
        return f"{name}, at least {low}"
    return name


def _command(path: list[str], command: Command) -> list[str]:
    if hasattr(command, "list_commands"):
        ctx = command.context_class(command, info_name=path[-1])
        lines = _usage(path, command, "COMMAND [ARGS]...") if len(path) == 1 else []
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            if sub is not None and not sub.hidden:
                lines += _command([*path, name], sub)
        return lines
    arguments = [f"{p.name.upper()}..." if p.nargs == -1 else p.name.upper()
                 for p in command.params if p.param_type_name == "argument"]
    return _usage(path, command, " ".join(arguments))


def _usage(path: list[str], command: Command, arguments: str) -> list[str]:
    """A command's heading, help, usage line and table of arguments and options."""
    help_text = (command.help or "").replace("\\[", "[")
    summary, _, rest = help_text.partition("\n\n")
    params = [p for p in command.params if p.name != "help"]
    lines = [f"## `{' '.join(path)}`", "", " ".join(summary.split()), ""]
    if rest.strip():
        lines += [" ".join(rest.split()), ""]
    lines += ["```", " ".join([*path, "[OPTIONS]", arguments]).strip(), "```", ""]
    if params:
        lines += ["| argument or option | value | default | meaning |", "|---|---|---|---|"]
        lines += [_param_row(p) for p in params]
        lines.append("")
    return lines


def cli_reference() -> str:
    """Every command of ``warcdeboil`` with its options, as Markdown."""
    from warcdeboil.cli import app

    return "\n".join(_command(["warcdeboil"], typer.main.get_command(app)))


def fields_reference() -> str:
    """The JSONL fields, in the order a line has them, as a Markdown table, with the type of
    each one's Parquet column."""
    from warcdeboil.output.parquet import arrow_name
    from warcdeboil.output.schema import FIELDS, SCHEMA_VERSION, describe

    lines = ["| field | type | Parquet type | present | example | meaning |",
             "|---|---|---|---|---|---|"]
    for field in FIELDS:
        lines.append(f"| `{field.name}` | {_cell(describe(field.type))} "
                     f"| `{_cell(arrow_name(field.type))}` | {_cell(field.when)} "
                     f"| `{_cell(field.example)}` | {_cell(field.description)} |")
    lines += ["", f"Schema version {SCHEMA_VERSION}."]
    return "\n".join(lines)


def on_page_markdown(markdown: str, **_: Any) -> str:
    if MARKERS["cli"] in markdown:
        markdown = markdown.replace(MARKERS["cli"], cli_reference())
    if MARKERS["fields"] in markdown:
        markdown = markdown.replace(MARKERS["fields"], fields_reference())
    return markdown
