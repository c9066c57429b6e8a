"""`python -m seq`: the `seq` command."""

from seq.cli import main

if __name__ == "__main__":
    main()
