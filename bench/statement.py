"""CPU instructions one execution of a statement takes, for the engine's micro-measures.

Runs the statement n and 2n times under valgrind's callgrind (hash seed fixed, so runs repeat
exactly) and answers the difference over n, less the same for `pass`: start-up, set-up,
warming and the loop around the statement cancel out.
Run: .venv/bin/python bench/statement.py "SETUP" "STATEMENT" [--runs N]
e.g. bench/statement.py "from app.engine import randomness" "randomness.shuffled_deck('0.1', 0)"
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROGRAM = """\
import sys
sys.path.insert(0, {root!r})
{setup}
def run(times):
    for _ in range(times):
{statement}
run(200)  # warm: the interpreter's specializations settle
run(int(sys.argv[1]))
"""


def instructions(*arguments: str) -> int:
    """The CPU instructions `python *arguments` takes, counted by callgrind, hash seed fixed."""
    result = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable,
                             *arguments], capture_output=True, text=True,
                            env={**os.environ, "PYTHONHASHSEED": "0"})  # so that runs repeat exactly
    found = re.search(r"Collected : (\d+)", result.stderr)
    if found is None:
        sys.exit(result.stderr[-2000:])
    return int(found.group(1))


def per_run(setup: str, statement: str, runs: int) -> float:
    with tempfile.TemporaryDirectory() as directory:
        program = Path(directory) / "statement.py"
        program.write_text(PROGRAM.format(root=str(ROOT), setup=setup, statement=textwrap.indent(statement, " " * 8)))
        return (instructions(str(program), str(2 * runs)) - instructions(str(program), str(runs))) / runs


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("setup")
    parser.add_argument("statement")
    parser.add_argument("--runs", type=int, default=2000)
    args = parser.parse_args()
    net = per_run(args.setup, args.statement, args.runs) - per_run(args.setup, "pass", args.runs)
    print(f"{net:,.0f} instructions a run of: {args.statement}")


if __name__ == "__main__":
    main()
