"""Runs what the CI templates run, as far as it can be run here (.ci/run calls this):
the workflows parse and call ci-templates/autograde.sh; the reporter reads the step that writes the
result; and autograde.sh gives 0 points to the skeletons and every point to the solutions."""

from __future__ import annotations

import base64
import json
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
    assert grade["run"] == f"ci-templates/autograde.sh {backend}"
    reporter = next(step for step in s if "autograding-grading-reporter" in step.get("uses", ""))
    assert reporter["with"]["runners"] == "cudalab"
    assert reporter["env"]["CUDALAB_RESULTS"] == "${{ steps.cudalab.outputs.result }}"


def test_gitlab_reports_junit() -> None:
    job = yaml.safe_load((HERE / "gitlab-ci.yml").read_text())["autograde"]
    assert "ci-templates/autograde.sh emu" in job["script"]
    assert job["artifacts"]["reports"]["junit"] == "build/emu/check-junit.xml"


def autograde(tree: Path) -> tuple[int, dict]:
    run = subprocess.run([str(tree / "ci-templates" / "autograde.sh"), "emu"], capture_output=True, text=True)
    line = (tree / "build" / "emu" / "classroom-result.txt").read_text().strip()
    assert line.startswith("result=")
    return run.returncode, json.loads(base64.b64decode(line[len("result=") :]))


def test_skeletons_score_nothing_and_solutions_everything(tmp_path: Path) -> None:
    tree = tmp_path / "workbook"
    shutil.copytree(ROOT, tree, ignore=shutil.ignore_patterns("build", ".git", "grader", "__pycache__"))
    status, result = autograde(tree)
    assert status != 0 and result["status"] == "fail"
    assert sum(t["score"] for t in result["tests"]) == 0 and result["max_score"] > 0
    for lab in (ROOT / "solutions").glob("[0-9][0-9]_*"):
        for cu in lab.glob("*.cu"):
            shutil.copy(cu, tree / "labs" / lab.name / cu.name)
    status, result = autograde(tree)
    assert status == 0 and result["status"] == "pass", [t for t in result["tests"] if t["status"] != "pass"]
    assert sum(t["score"] for t in result["tests"]) == result["max_score"]
