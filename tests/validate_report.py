#!/usr/bin/env python3
"""Checks a ptxkit JSON document against its installed JSON Schema.

usage: validate_report.py SCHEMA_DIR FILE.json [--kind KIND] [--schema FILE] [--csv FILE.csv]
  A report names its kind ("kind": "bench reduce"), which names the schema
  (schemas/bench-reduce.schema.json); --kind gives it for a document that
  names none ("info", "tune --export"); --schema names the schema file
  itself (the vendored T4 schema). --csv also checks the CSV report of the
  same run: a `table` column, every table's columns, a line a row.
Exit status: 0 valid, 1 not, 2 usage, 77 without python3-jsonschema.
"""
import csv
import io
import json
import os
import re
import sys

try:
    import jsonschema
except ImportError:
    print("python3-jsonschema is not installed", file=sys.stderr)
    sys.exit(77)


def schema_file(directory, kind):
    name = re.sub(r"-+", "-", re.sub(r"[^a-z0-9]+", "-", kind.lower())).strip("-")
    return os.path.join(directory, name + ".schema.json")


def check_csv(doc, path):
    with open(path, newline="") as f:
        rows = list(csv.reader(io.StringIO(f.read())))
    if not rows or rows[0][0] != "table":
        return "the CSV does not start with a table column"
    header = rows[0]
    names = []
    for t in doc["tables"]:
        for c in t["columns"]:
            if c["name"] not in names:
                names.append(c["name"])
    if header[1:] != names:
        return "CSV columns %s, JSON columns %s" % (header[1:], names)
    expected = [t["id"] for t in doc["tables"] for _ in t["rows"]]
    got = [r[0] for r in rows[1:]]
    if got != expected:
        return "CSV rows of tables %s, JSON %s" % (got, expected)
    if any(len(r) != len(header) for r in rows):
        return "a CSV line with a cell too many or too few"
    return None


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    directory, path = argv[0], argv[1]
    kind = schema_path = csv_path = None
    rest = argv[2:]
    while rest:
        if len(rest) < 2 or rest[0] not in ("--kind", "--schema", "--csv"):
            print(__doc__, file=sys.stderr)
            return 2
        if rest[0] == "--kind":
            kind = rest[1]
        elif rest[0] == "--schema":
            schema_path = rest[1]
        else:
            csv_path = rest[1]
        rest = rest[2:]
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        print("%s: %s" % (path, e))
        return 1
    if not schema_path:
        kind = kind or (doc.get("kind") if isinstance(doc, dict) else None)
        if not kind:
            print("%s names no kind (give --kind)" % path)
            return 1
        schema_path = schema_file(directory, kind)
    try:
        with open(schema_path) as f:
            schema = json.load(f)
    except (OSError, ValueError) as e:
        print("schema %s: %s" % (schema_path, e))
        return 1
    jsonschema.Draft202012Validator.check_schema(schema)
    errors = sorted(jsonschema.Draft202012Validator(schema).iter_errors(doc), key=lambda e: list(e.path))
    for e in errors[:5]:
        print("%s: %s: %s" % (path, "/".join(str(p) for p in e.path), e.message[:300]))
    if errors:
        return 1
    if csv_path:
        why = check_csv(doc, csv_path)
        if why:
            print("%s: %s" % (csv_path, why))
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
