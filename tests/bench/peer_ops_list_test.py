"""Checks that the list of peer operations generated at build time (cmake/peer_ops_list.cmake,
which reads bench/peer_ops.py as text) names exactly the keys of peer_ops.py's CASES table, read
here with Python's own parser. Usage: peer_ops_list_test.py PEER_OPS_PY GENERATED_INC"""
import ast
import sys


def cases_keys(path):
    tree = ast.parse(open(path, encoding="utf-8").read())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "CASES" for t in node.targets):
            return [k.value for k in node.value.keys]
    sys.exit(f"{path}: no CASES table")


def generated(path):
    names = []
    for line in open(path, encoding="utf-8"):
        line = line.strip()
        if line.startswith('"'):
            names.append(line.rstrip(",").strip('"'))
    return names


def main():
    want, got = cases_keys(sys.argv[1]), generated(sys.argv[2])
    if want != got:
        sys.exit(f"the generated list {got} differs from CASES {want}: fix cmake/peer_ops_list.cmake "
                 "or write each CASES key as `    \"name\": (` on a line of its own")
    print(f"{len(got)} peer operations listed")


if __name__ == "__main__":
    main()
