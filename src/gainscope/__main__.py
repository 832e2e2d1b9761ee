"""``python -m gainscope`` runs the command line."""

from gainscope.cli import main

if __name__ == "__main__":
    main()
