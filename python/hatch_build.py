"""Hatchling build hook: a platform wheel carrying the higmem binary.

python/build.py cross-compiles the binary and builds one wheel per
platform, setting:

- HIGMEM_BINARY: the binary to carry (installed as higmem/bin/higmem, or
  higmem.exe on Windows);
- HIGMEM_WHEEL_PLATFORM: the wheel's platform tag, e.g.
  manylinux_2_17_x86_64.manylinux2014_x86_64.musllinux_1_1_x86_64;
- HIGMEM_NOTICES: the licence and notice files of the Go modules linked
  into the binary, installed as higmem/THIRD_PARTY_LICENSES.txt.

The binary is pure Go (no cgo), so one wheel serves any Python 3 on its
platform: the tag is py3-none-PLATFORM.
"""

from __future__ import annotations

import os

from hatchling.builders.hooks.plugin.interface import BuildHookInterface


class CustomBuildHook(BuildHookInterface):
    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict) -> None:
        if self.target_name != "wheel":
            return
        binary = os.environ.get("HIGMEM_BINARY", "")
        platform = os.environ.get("HIGMEM_WHEEL_PLATFORM", "")
        if not binary or not platform:
            raise RuntimeError(
                "higmem wheels carry the Go binary: build them with `python python/build.py` "
                "(which sets HIGMEM_BINARY and HIGMEM_WHEEL_PLATFORM), not with pip or build directly")
        if not os.path.isfile(binary):
            raise RuntimeError(f"HIGMEM_BINARY={binary}: no such file")
        name = "higmem.exe" if platform.startswith("win") else "higmem"
        build_data["pure_python"] = False
        build_data["tag"] = f"py3-none-{platform}"
        build_data["force_include"][binary] = f"higmem/bin/{name}"
        notices = os.environ.get("HIGMEM_NOTICES", "")
        if not os.path.isfile(notices):
            raise RuntimeError(f"HIGMEM_NOTICES={notices!r}: no such file (python/build.py writes it)")
        build_data["force_include"][notices] = "higmem/THIRD_PARTY_LICENSES.txt"
