"""Old spellings of options that still work: one CLI vocabulary without breaking scripts.

A word means the same thing in every command (``gainscope help vocabulary``): ``--baseline`` is a run's name,
``--model`` the LLM, ``-o`` a file, ``--depth`` trec_eval's -M, ``--format`` the output format. Where a
command used one of them in another meaning, the option got a new spelling and the old one is declared as
:class:`Respelled`'s ``old``: it is still accepted, hidden from ``--help``, and using it prints a note on
standard error that names the new spelling::

    @click.option("--pool-depth", "depth", cls=Respelled, old=("--depth",), type=int, default=10)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import click

__all__ = ["Respelled"]


class Respelled(click.Option):
    """A click option that also accepts its old spellings ``old`` (hidden from ``--help``).

    A value given under an old spelling is the option's value, with ``warning: ... is deprecated ... use NEW``
    on standard error; giving both spellings is a usage error. ``accept_old`` (optional) tells whether a value
    given under an old spelling means what the new spelling means (``--baseline`` in ``gate``: a run file, not
    a run's name); when it returns a message instead, the command stops with that usage error.
    """

    def __init__(self, param_decls: Sequence[str], *, old: Sequence[str],
                 accept_old: Callable[[Any], str | None] | None = None, **attrs: Any) -> None:
        super().__init__(param_decls, **attrs)
        if self.is_flag:
            raise TypeError("Respelled takes options with a value, not flags")
        self.old = tuple(old)
        self.accept_old = accept_old

    def _old_dest(self, spelling: str) -> str:
        return f"{self.name}\0{spelling}"

    def add_to_parser(self, parser: Any, ctx: click.Context) -> None:
        super().add_to_parser(parser, ctx)
        for spelling in self.old:
            parser.add_option(obj=self, opts=[spelling], dest=self._old_dest(spelling),
                              action="append" if self.multiple else "store", nargs=self.nargs)

    def consume_value(self, ctx: click.Context, opts: Any) -> Any:
        used = [spelling for spelling in self.old if self._old_dest(spelling) in opts]
        if used:
            old, new = used[0], self.opts[-1]
            if self.name in opts or len(used) > 1:
                raise click.UsageError(f"{'/'.join(used)} {'is the old spelling' if len(used) == 1 else 'are old spellings'} "
                                       f"of {new}; give {new} only", ctx)
            value = opts[self._old_dest(old)]
            if self.accept_old is not None:
                refused = self.accept_old(value[-1] if self.multiple else value)
                if refused is not None:
                    raise click.UsageError(refused, ctx)
            click.echo(f"warning: {old} is deprecated in '{ctx.command_path}'; use {new} (the same option under "
                       f"its new name, see gainscope help vocabulary)", err=True)
            opts = {**opts, self.name: value}
        return super().consume_value(ctx, opts)
