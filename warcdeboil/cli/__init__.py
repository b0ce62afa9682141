"""The ``warcdeboil`` command line: clean, and the stages one by one (index, fit, apply).

One module per group of commands (:mod:`.clean`, :mod:`.stages`, :mod:`.tools`, :mod:`.lm`);
:mod:`.options` declares the options they share and :mod:`.console` what they print. Command
bodies parse options, call the library and print; errors are one line on stderr with exit
status 1 (2 for usage), no traceback unless ``-v``. Heavy modules are imported inside the
commands, so that ``--help`` and every command start fast.
"""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from .clean import clean
from .lm import lm_app, perplexity
from .process import tune_process
from .stages import apply, fit, index
from .tools import check, evaluate_command, recompress, report_command

__all__ = ["app", "main"]

app = typer.Typer(
    no_args_is_help=True,
    add_completion=False,
    help="Clean web archives: learn each site's boilerplate and remove it.",
)


def _version(show: bool) -> None:
    if show:
        from warcdeboil._version import __version__

        typer.echo(f"warcdeboil {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True,
                           help="Print the version and exit.")
    ] = False,
) -> None:
    """Clean web archives: learn each site's boilerplate and remove it."""


# In the order --help lists them.
app.command()(clean)
app.command()(index)
app.command()(fit)
app.command()(apply)
app.command(name="report")(report_command)
app.command()(recompress)
app.command()(check)
app.command(name="eval")(evaluate_command)
app.command()(perplexity)
app.add_typer(lm_app, name="lm")


def main() -> None:
    """Entry point of the ``warcdeboil`` script."""
    from warcdeboil.run.signals import Interrupted, stop_on_signals

    tune_process()
    try:
        with stop_on_signals():
            app()
    except Interrupted as exc:
        typer.echo(f"warcdeboil: {exc.describe()}", err=True)
        sys.exit(exc.exit_status)
    except KeyboardInterrupt:
        typer.echo("warcdeboil: interrupted", err=True)
        sys.exit(130)
