#!/usr/bin/env python3
"""Prints the executable products of the Benchmarks package that depend on Wire's package alone, one per line.

Reads `swift package dump-package` on stdin. CI builds these (the figure tools); the peers, which depend on SwiftNIO,
AsyncHTTPClient or Hummingbird, or on nothing of Wire (URLSessionClient), build only when Benchmarks/run.sh runs.
"""
import json
import sys

package = json.load(sys.stdin)
wire = {dependency["fileSystem"][0]["identity"] for dependency in package["dependencies"] if "fileSystem" in dependency}
for target in package["targets"]:
    if target["type"] != "executable":
        continue
    packages = {dependency["product"][1] for dependency in target["dependencies"] if "product" in dependency}
    others = [dependency for dependency in target["dependencies"] if "product" not in dependency]
    if packages and packages <= wire and not others:
        print(target["name"])
