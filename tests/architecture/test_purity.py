"""The scoring library, the file formats, the reports, the CLI and the agreement maths stay pure:
importing them never loads Django."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_metrics_formats_reports_cli_and_agreement_import_without_django() -> None:
    code = (
        "import sys\n"
        "import evaluation.metrics, evaluation.formats, evaluation.reports, evaluation.cli\n"
        "import annotator.disputes.agreement\n"
        "assert 'django' not in sys.modules, sorted(m for m in sys.modules if m.startswith('django'))\n"
        "assert 'scipy' not in sys.modules, 'scipy is imported lazily, only for comparisons'\n"
        "print('pure')\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "pure"
