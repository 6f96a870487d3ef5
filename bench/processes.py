"""The benches' look at the processes they start (Linux /proc): their children and CPU time."""

import os
from pathlib import Path


def children(pid: int) -> list[int]:
    """The processes `pid` forked (its workers), found through each of its threads; [] once it is gone."""
    found = []
    for task in os.listdir(f"/proc/{pid}/task") if os.path.exists(f"/proc/{pid}/task") else ():
        try:
            found += [int(child) for child in Path(f"/proc/{pid}/task/{task}/children").read_text().split()]
        except FileNotFoundError:
            pass
    return found


def cpu_seconds(*pids: int) -> float:
    """User and system CPU time so far of each process still there, summed."""
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
        except FileNotFoundError:
            continue
        total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK")
