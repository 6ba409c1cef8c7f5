"""The deployment files of docs/fleet.md, checked by their own tools: the systemd unit by
``systemd-analyze verify``, the Kubernetes Job by the API's schema (``kubernetes-validate``),
and the rules those tools cannot see."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

FLEET = Path(__file__).parents[1] / "docs" / "fleet.md"
#: Where the unit's ExecStart points (replaced by an executable of the test's own, since
#: systemd-analyze checks that the command exists).
COMMAND = "/opt/explorer/bin/explorer"


def snippet(language: str) -> str:
    """The one fenced block of ``language`` in docs/fleet.md."""
    blocks = re.findall(rf"```{language}\n(.*?)```", FLEET.read_text(), re.S)
    assert len(blocks) == 1, f"expected one {language} block, found {len(blocks)}"
    return str(blocks[0])


def systemd_analyze() -> str:
    """The systemd-analyze command: installed by .ci/system-packages, so missing only on a
    machine that has not run it (CI fails rather than skips)."""
    found = shutil.which("systemd-analyze")
    if found is None:
        if os.environ.get("CI"):
            pytest.fail("systemd-analyze is missing: .ci/system-packages installs systemd")
        pytest.skip("needs systemd-analyze (Debian's systemd; `bash .ci/system-packages`)")
    return found


def test_the_unit_passes_systemd_analyze_verify(tmp_path: Path) -> None:
    """systemd-analyze verify loads the template unit without an error or a warning."""
    command = tmp_path / "explorer"
    command.write_text("#!/bin/sh\n")
    command.chmod(0o755)
    unit = tmp_path / "explorer-record@.service"
    unit.write_text(snippet("ini").replace(COMMAND, str(command)))
    result = subprocess.run(
        [systemd_analyze(), "verify", "--man=no", str(unit)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (result.returncode, result.stdout + result.stderr) == (0, "")


def test_no_value_in_the_unit_carries_a_comment() -> None:
    """A "#" after a value is part of it (systemd comments are whole lines), so none has one."""
    for line in snippet("ini").splitlines():
        if "=" in line and not line.lstrip().startswith(("#", ";")):
            assert "#" not in line.split("=", 1)[1], line


def job() -> dict[str, Any]:
    """The Kubernetes Job of docs/fleet.md."""
    loaded = yaml.safe_load(snippet("yaml"))
    assert isinstance(loaded, dict)
    return loaded


def test_the_job_is_valid_for_the_kubernetes_api_schema() -> None:
    """The Job validates strictly (no unknown field) against the newest bundled API schema."""
    version = kubernetes_validate.latest_version()
    kubernetes_validate.validate(job(), version, strict=True)
    broken = job()
    broken["spec"]["backoffLimitPerJob"] = 3
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(broken, version, strict=True)


def test_a_per_index_backoff_limit_comes_with_restart_policy_never() -> None:
    """The API server refuses backoffLimitPerIndex unless pods restart Never (a rule of its
    validation code, not of the schema)."""
    spec = job()["spec"]
    assert "backoffLimitPerIndex" in spec
    assert spec["template"]["spec"]["restartPolicy"] == "Never"
