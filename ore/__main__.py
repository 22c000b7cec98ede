"""`python -m ore`: the same as the `ore` command."""

from ore.cli import program

program()
