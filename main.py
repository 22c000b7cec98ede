"""Entry point for running ORE from a checkout: `python main.py ...` is the `ore` command."""

from ore.cli import main

if __name__ == "__main__":
    main()
