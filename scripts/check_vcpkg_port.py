#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Check ports/strata against vcpkg's manifest format, without vcpkg (which CI cannot download).

    scripts/check_vcpkg_port.py [port dir]     (default: ports/strata next to this script's repository)

Checks vcpkg.json field by field against the rules of vcpkg's manifest reference
(https://learn.microsoft.com/vcpkg/reference/vcpkg-json): names, the one version field and its format,
port-version, description, dependency and feature shapes, unknown fields. Then Strata's own rules: the
version is include/strata/config/version.hpp's, the features are the package's components, and the
portfile/usage files are there and fix up the CMake package Strata. Standard library only. Exit 1 with
one line per problem.
"""
import json
import pathlib
import re
import sys

NAME = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")  # identifiers: lowercase alphanumerics and single dashes
RESERVED = {"prn", "aux", "nul", "con", "lpt1", "lpt2", "lpt3", "com1", "com2", "com3", "core", "default"}
SEMVER = re.compile(r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
                    r"(-((0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(\.(0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?"
                    r"(\+[0-9a-zA-Z-]+(\.[0-9a-zA-Z-]+)*)?$")
RELAXED = re.compile(r"^\d+(\.\d+)*$")  # "version": dot-separated numbers
DATE = re.compile(r"^\d{4}-\d{2}-\d{2}(\.\d+)*$")
VERSION_FIELDS = {"version": RELAXED, "version-semver": SEMVER, "version-date": DATE, "version-string": None}
TOP_FIELDS = set(VERSION_FIELDS) | {
    "name", "port-version", "maintainers", "description", "homepage", "documentation", "license", "supports",
    "dependencies", "default-features", "features", "builtin-baseline", "overrides", "vcpkg-configuration"}
DEP_FIELDS = {"name", "host", "features", "default-features", "platform", "version>="}
FEATURE_FIELDS = {"description", "dependencies", "supports", "license"}

problems = []


def bad(where, what):
    problems.append(f"{where}: {what}")


def check_fields(where, obj, allowed):
    for key in obj:
        if key not in allowed and not key.startswith("$"):  # "$..." keys are comments
            bad(where, f"unknown field '{key}'")


def check_text(where, value):
    """description: a string or an array of strings."""
    if isinstance(value, str):
        return
    if not (isinstance(value, list) and value and all(isinstance(s, str) for s in value)):
        bad(where, "must be a string or a non-empty array of strings")


def check_name(where, value):
    if not isinstance(value, str) or not NAME.match(value) or value in RESERVED:
        bad(where, f"'{value}' is not a valid name (lowercase letters, digits and single dashes; not reserved)")


def check_dependency(where, dep):
    if isinstance(dep, str):
        check_name(where, dep)
        return
    if not isinstance(dep, dict):
        bad(where, "a dependency is a port name or an object")
        return
    check_fields(where, dep, DEP_FIELDS)
    if "name" not in dep:
        bad(where, "missing 'name'")
    else:
        check_name(f"{where}.name", dep["name"])
    for flag in ("host", "default-features"):
        if flag in dep and not isinstance(dep[flag], bool):
            bad(f"{where}.{flag}", "must be true or false")
    for i, feature in enumerate(dep.get("features", [])):
        name = feature.get("name") if isinstance(feature, dict) else feature
        check_name(f"{where}.features[{i}]", name)
    if "platform" in dep and not isinstance(dep["platform"], str):
        bad(f"{where}.platform", "must be a platform expression string")
    if "version>=" in dep and not isinstance(dep["version>="], str):
        bad(f"{where}.version>=", "must be a version string")


def check_dependencies(where, deps):
    if not isinstance(deps, list):
        bad(where, "must be an array")
        return
    for i, dep in enumerate(deps):
        check_dependency(f"{where}[{i}]", dep)


def check_manifest(m):
    if not isinstance(m, dict):
        bad("vcpkg.json", "must be a JSON object")
        return
    check_fields("vcpkg.json", m, TOP_FIELDS)
    if "name" not in m:
        bad("vcpkg.json", "missing 'name' (required for a port)")
    else:
        check_name("name", m["name"])
    versions = [f for f in VERSION_FIELDS if f in m]
    if len(versions) != 1:
        bad("vcpkg.json", f"needs exactly one of {sorted(VERSION_FIELDS)}, has {versions}")
    for field in versions:
        value, pattern = m[field], VERSION_FIELDS[field]
        if not isinstance(value, str) or "#" in value or (pattern and not pattern.match(value)):
            bad(field, f"'{value}' is not a valid {field}")
    if "port-version" in m and not (isinstance(m["port-version"], int) and m["port-version"] >= 0):
        bad("port-version", "must be a non-negative integer")
    if "description" not in m:
        bad("vcpkg.json", "missing 'description'")
    else:
        check_text("description", m["description"])
    for field in ("homepage", "documentation", "supports", "builtin-baseline"):
        if field in m and not isinstance(m[field], str):
            bad(field, "must be a string")
    if "license" in m and m["license"] is not None and not isinstance(m["license"], str):
        bad("license", "must be an SPDX expression string or null")
    check_dependencies("dependencies", m.get("dependencies", []))
    features = m.get("features", {})
    if not isinstance(features, dict):
        bad("features", "must be an object mapping feature names to features")
        features = {}
    for name, feature in features.items():
        where = f"features.{name}"
        check_name(where, name)
        if not isinstance(feature, dict):
            bad(where, "must be an object")
            continue
        check_fields(where, feature, FEATURE_FIELDS)
        if "description" not in feature:
            bad(where, "missing 'description'")
        else:
            check_text(f"{where}.description", feature["description"])
        check_dependencies(f"{where}.dependencies", feature.get("dependencies", []))
    for i, default in enumerate(m.get("default-features", [])):
        name = default.get("name") if isinstance(default, dict) else default
        if name not in features:
            bad(f"default-features[{i}]", f"'{name}' is not a feature of this port")


def check_strata(port, repo, m):
    """Strata's own expectations of its port."""
    text = (repo / "include/strata/config/version.hpp").read_text()
    version = re.search(r'#define STRATA_VERSION_STRING "([0-9.]+)"', text).group(1)
    port_version = next((m[f] for f in VERSION_FIELDS if f in m), None)
    if port_version != version:
        bad("version", f"the port says {port_version}, include/strata/config/version.hpp says {version}")
    if m.get("name") != "strata":
        bad("name", "the port must be named 'strata'")
    features = m.get("features", {})
    if set(features) != {"cuda", "hip", "host", "kokkos"}:
        bad("features", f"must be the package's components cuda, hip, host, kokkos; has {sorted(features)}")
    host_deps = [d if isinstance(d, str) else d.get("name") for d in features.get("host", {}).get("dependencies", [])]
    if "boost-context" not in host_deps:
        bad("features.host", "must depend on boost-context (the emulator's fibers)")
    portfile = port / "portfile.cmake"
    if not portfile.exists():
        bad("portfile.cmake", "missing")
    else:
        text = portfile.read_text()
        for needed in ("vcpkg_cmake_configure", "vcpkg_cmake_install", "vcpkg_cmake_config_fixup(PACKAGE_NAME Strata CONFIG_PATH share/cmake/Strata)"):
            if needed not in re.sub(r"\s+", " ", text):
                bad("portfile.cmake", f"does not call {needed}")
    deps = [d if isinstance(d, str) else d.get("name") for d in m.get("dependencies", [])]
    for helper in ("vcpkg-cmake", "vcpkg-cmake-config"):
        if helper not in deps:
            bad("dependencies", f"the portfile uses {helper}: it must be a (host) dependency")
    if not (port / "usage").exists():
        bad("usage", "missing")


def main():
    repo = pathlib.Path(__file__).resolve().parent.parent
    port = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else repo / "ports/strata"
    try:
        manifest = json.loads((port / "vcpkg.json").read_text())
    except (OSError, ValueError) as e:
        print(f"{port}/vcpkg.json: {e}")
        return 1
    check_manifest(manifest)
    check_strata(port, repo, manifest)
    for p in problems:
        print(f"{port}/{p}")
    if not problems:
        print(f"{port}: vcpkg.json, portfile.cmake and usage are well-formed")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
