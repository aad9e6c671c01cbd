#!/usr/bin/env python3
"""check_print.py PRINT_VALUES -- run print_values and parse every line it prints with
Python's json module (strictly: no NaN or Infinity), comparing each value exactly with what
idlc's printers must give (docs/idl.md, section 7c). Exit 0 when all match."""
import json
import subprocess
import sys


def no_constants(name):
    raise ValueError("not JSON: " + name)


POINT = {"x": -2147483648, "y": 18446744073709551615, "z": -0.5, "b": True, "f": 1.5}
TEN = "0123456789"
EXPECTED = [
    POINT,
    "GREEN",
    7,                                          # a value no enumerator has
    'a"b\\c\n\x01\u00e9\u00ff/',               # UTF-8 kept, the lone 0xff as \u00ff
    None,
    "0001abcdff",
    "deadbe",
    [TEN, "x", ""],
    [-9223372036854775808, 9223372036854775807],
    {"c": "RED", "r": -1},
    {"c": "BLUE"},
    {"c": "GREEN", "p": {"x": 7, "y": 0, "z": 1e300, "b": False, "f": 0.100000001}},
    {"k": 9, "raw": "0102030405"},
    {"k": 1, "in": {"c": "RED", "r": 42}},
    {"p": None},
    {"x": 0, "y": 0, "z": None, "b": False, "f": None},
    {"v": 1, "next": {"v": 2, "next": {"v": 3, "next": None}}},
    {"t": "hi", "n": 5},
    {"o": [{"k": 2, "ns": [TEN] * 3}] * 2,
     "v": "01020304050607",
     "os": [{"p": POINT}] * 2,
     "q": "3fff" + "0" * 28,
     "hs": [-9223372036854775808 + i for i in range(4)],
     "s": -2,
     "uc": 255},
    ["ab", -5],
    POINT,
    None,
    {"v": 2, "next": {"v": 3, "next": None}},
    None,
    False,
    False,
]


def main():
    out = subprocess.run([sys.argv[1]], check=True, capture_output=True).stdout
    lines = out.decode("utf-8").split("\n")
    assert lines[-1] == "", "output does not end with a newline"
    lines = lines[:-1]
    if len(lines) != len(EXPECTED):
        print(f"{len(lines)} values printed, {len(EXPECTED)} expected")
        return 1
    bad = 0
    for i, (text, want) in enumerate(zip(lines, EXPECTED)):
        try:
            got = json.loads(text, parse_constant=no_constants)
        except ValueError as e:
            print(f"value {i}: not JSON ({e}): {text}")
            bad += 1
            continue
        # exact: the same type too (an integer must not come back as a float)
        if json.dumps(got, sort_keys=True) != json.dumps(want, sort_keys=True) or got != want:
            print(f"value {i}: got  {text}\n          want {json.dumps(want)}")
            bad += 1
    print(f"{len(lines) - bad}/{len(lines)} printed values as expected")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
