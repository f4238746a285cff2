"""Demo data for the grading feature; called by annotator/management/commands/demo.py in order."""

from annotator.demo_data import DemoContext


def build(ctx: DemoContext) -> None:
    """Nothing yet: the grading issue extends the demo here."""
