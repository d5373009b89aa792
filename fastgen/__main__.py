"""Command line: ``fastgen {demo,info}`` (also ``python -m fastgen ...``)."""

import sys

USAGE = """\
usage: fastgen <command> [options]   (or: python -m fastgen ...)

commands:
  demo [--seed N] [--no-sklearn]
         spam filtering on the bundled SMS Spam Collection with fastgen's MultinomialNB,
         BernoulliNB and ComplementNB: accuracy, speed, and (when scikit-learn is
         installed) a side-by-side comparison with scikit-learn
  info   print the versions of fastgen and its dependencies and whether OpenMP is enabled

options:
  -h, --help   show this message and exit
"""


def _error(message):
    print(f"fastgen: error: {message}", file=sys.stderr)
    print("Run 'fastgen --help' for usage.", file=sys.stderr)
    return 2


def _demo(args):
    seed, compare_sklearn = 0, True
    args = list(args)
    while args:
        arg = args.pop(0)
        if arg in ("-h", "--help"):
            print(USAGE, end="")
            return 0
        if arg == "--no-sklearn":
            compare_sklearn = False
        elif arg == "--seed" or arg.startswith("--seed="):
            value = arg.partition("=")[2] if "=" in arg else (args.pop(0) if args else "")
            try:
                seed = int(value)
            except ValueError:
                return _error(f"--seed expects an integer, got {value!r}")
        else:
            return _error(f"unknown option for demo: {arg!r}")
    from fastgen._demo import run

    return run(seed=seed, compare_sklearn=compare_sklearn)


def _info(args):
    if args:
        return _error(f"info takes no arguments, got {' '.join(args)!r}")
    import fastgen

    fastgen.show_config()
    return 0


COMMANDS = {"demo": _demo, "info": _info}


def main(argv=None):
    """Run the command line with ``argv`` (default ``sys.argv[1:]``); return the exit status."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if not argv or argv[0] in ("-h", "--help", "help"):
        print(USAGE, end="")
        return 0
    command, args = argv[0], argv[1:]
    if command not in COMMANDS:
        return _error(f"unknown command {command!r} (choose from {', '.join(COMMANDS)})")
    return COMMANDS[command](args)


if __name__ == "__main__":
    sys.exit(main())
