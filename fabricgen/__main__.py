"""`python -m fabricgen` runs the CLI."""

from fabricgen.cli import main

main()
