import sys

from cake_router.cli import main

if __name__ == "__main__":
    sys.exit(main())
