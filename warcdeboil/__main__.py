"""``python -m warcdeboil`` runs the command line."""

from .cli import main

main()
