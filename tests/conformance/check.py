#!/usr/bin/env python3
"""Reads the result folders `conformance server -o DIR` wrote and prints one
line per scenario. A scenario passes when none of its checks is FAILURE.
Exits 1 when a scenario that applies (one not named in not-applicable.txt)
fails or produced no result.

Usage: check.py [--na FILE] [--not-testable-na] RESULTS-DIR SCENARIO...
(the scenarios that were run). `--na FILE` reads the not-applicable list
from FILE (default not-applicable.txt beside this script);
`--not-testable-na` counts a check whose message starts `Not testable:`
(the suite could not find its fixture tool) as not applicable rather than
failed, and says how many there were.
"""

import json
import pathlib
import re
import sys

HERE = pathlib.Path(__file__).resolve().parent


def not_applicable(path):
    out = {}
    for line in path.read_text().splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        name, _, why = line.partition(" ")
        out[name] = why.strip()
    return out


def main():
    args = sys.argv[1:]
    na_file = HERE / "not-applicable.txt"
    not_testable_na = False
    while args and args[0].startswith("--"):
        flag = args.pop(0)
        if flag == "--na":
            na_file = pathlib.Path(args.pop(0))
        elif flag == "--not-testable-na":
            not_testable_na = True
        else:
            sys.exit(f"unknown flag {flag}")
    results = pathlib.Path(args[0])
    expected = args[1:]
    na = not_applicable(na_file)
    seen = {}
    for d in sorted(results.iterdir()):
        m = re.match(r"server-(.+)-\d{4}-\d\d-\d\dT[\d-]+Z$", d.name)
        f = d / "checks.json"
        if m and f.exists():
            seen[m.group(1)] = json.loads(f.read_text())
    failing, applicable = [], 0
    for name in sorted(set(expected) | set(seen)):
        checks = seen.get(name)
        if name in na:
            if checks is None:
                print(f"n/a   {name}: not run ({na[name]})")
            else:
                failed = sum(c.get("status") == "FAILURE" for c in checks)
                print(f"n/a   {name}: {len(checks) - failed}/{len(checks)} checks ({na[name]})")
            continue
        applicable += 1
        if checks is None:
            failing.append(name)
            print(f"FAIL  {name}: no result")
            continue
        failed = [c for c in checks if c.get("status") == "FAILURE"]
        untestable = []
        if not_testable_na:
            untestable = [c for c in failed if str(c.get("errorMessage", "")).startswith("Not testable:")]
            failed = [c for c in failed if c not in untestable]
        warn = sum(c.get("status") == "WARNING" for c in checks)
        note = (f"{len(checks) - len(failed) - len(untestable)}/{len(checks)} checks"
                + (f", {len(untestable)} not testable without fixture tools" if untestable else "")
                + (f", {warn} warning(s)" if warn else ""))
        if failed:
            failing.append(name)
            why = "; ".join(str(c.get("errorMessage") or c.get("id"))[:160] for c in failed)
            print(f"FAIL  {name}: {note}: {why}")
        else:
            print(f"pass  {name}: {note}")
    print(f"conformance: {applicable - len(failing)} of {applicable} applicable scenarios pass, "
          f"{len(na)} not applicable" + (f"; failing: {', '.join(failing)}" if failing else ""))
    sys.exit(1 if failing else 0)


if __name__ == "__main__":
    main()
