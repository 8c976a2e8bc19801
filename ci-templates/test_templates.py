"""Runs what the CI templates run, as far as it can be run here (.ci/run calls this):
the workflows parse and call ci-templates/autograde.sh; the reporter reads the step that writes the
result; and autograde.sh gives 0 points to the skeletons and every point to the solutions. The dev
container (.devcontainer/) sets a class's Codespace up with the README's own setup."""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


def steps(workflow: str) -> list[dict]:
    data = yaml.safe_load((HERE / workflow).read_text())
    (job,) = data["jobs"].values()
    assert job["name"] == "Autograding Tests"  # the check run GitHub Classroom looks for
    return job["steps"]


@pytest.mark.parametrize(
    "workflow,backend", [("github-classroom.yml", "emu"), ("github-gpu-runner.yml", "cuda")]
)
def test_github_workflows_report_the_autograde_step(workflow: str, backend: str) -> None:
    s = steps(workflow)
    grade = next(step for step in s if step.get("id") == "cudalab")
    assert grade["run"] == f'ci-templates/autograde.sh {backend} "$CUDALAB_LAB"'
    assert "CUDALAB_LAB" in yaml.safe_load((HERE / workflow).read_text())["env"]
    upload = next(step for step in s if "upload-artifact" in step.get("uses", ""))
    assert f"build/{backend}/report/" in upload["with"]["path"]  # the HTML report page
    reporter = next(step for step in s if "autograding-grading-reporter" in step.get("uses", ""))
    assert reporter["with"]["runners"] == "cudalab"
    assert reporter["env"]["CUDALAB_RESULTS"] == "${{ steps.cudalab.outputs.result }}"


def test_gitlab_reports_junit() -> None:
    job = yaml.safe_load((HERE / "gitlab-ci.yml").read_text())["autograde"]
    assert 'ci-templates/autograde.sh emu "$CUDALAB_LAB"' in job["script"]
    assert job["artifacts"]["reports"]["junit"] == "build/emu/check-junit.xml"


def autograde(tree: Path, lab: str = "") -> tuple[int, dict]:
    run = subprocess.run(
        [str(tree / "ci-templates" / "autograde.sh"), "emu", lab], capture_output=True, text=True
    )
    line = (tree / "build" / "emu" / "classroom-result.txt").read_text().strip()
    assert line.startswith("result=")
    assert len(line) - len("result=") <= 64 << 10  # within what one environment variable may hold
    return run.returncode, json.loads(base64.b64decode(line[len("result=") :]))


def test_skeletons_score_nothing_and_solutions_everything(tmp_path: Path) -> None:
    """On a student release (CUDALAB_RELEASE: one `make student-release` made and built, which this
    grades in place) or a copy of the workbook without its builds and grader."""
    if release := os.environ.get("CUDALAB_RELEASE"):
        tree = Path(release).resolve()
    else:
        tree = tmp_path / "workbook"
        shutil.copytree(ROOT, tree, ignore=shutil.ignore_patterns("build", ".git", "grader", "__pycache__"))
    status, result = autograde(tree)
    assert status != 0 and result["status"] == "fail"
    assert sum(t["score"] for t in result["tests"]) == 0 and result["max_score"] > 0
    status, result = autograde(tree, "03")  # one assignment's lab
    assert status != 0 and {t["name"].split("/")[0] for t in result["tests"]} == {"03_matmul_variants"}
    for lab in (ROOT / "solutions").glob("[0-9][0-9]_*"):
        for cu in lab.glob("*.cu"):
            shutil.copy(cu, tree / "labs" / lab.name / cu.name)
    status, result = autograde(tree)
    assert status == 0 and result["status"] == "pass", [t for t in result["tests"] if t["status"] != "pass"]
    assert sum(t["score"] for t in result["tests"]) == result["max_score"]


def test_the_dev_container_runs_the_readmes_setup_on_cis_debian() -> None:
    """A Codespace is set up as the README says and as CI is (./setup.sh on Debian 12): what CI
    proves of a fresh machine holds there."""
    container = json.loads((ROOT / ".devcontainer" / "devcontainer.json").read_text())
    assert container["postCreateCommand"].split(" && ")[0] == "./setup.sh"
    assert container["image"].endswith(":bookworm")  # Debian 12, CI's
    assert "./setup.sh" in (ROOT / "README.md").read_text()
    assert "./setup.sh\n" in (ROOT / ".ci" / "run").read_text()
