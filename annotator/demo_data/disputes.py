"""Demo data for the disputes feature; called by annotator/management/commands/demo.py in order."""

from annotator.demo_data import DemoContext


def build(ctx: DemoContext) -> None:
    """Nothing yet: the disputes issue extends the demo here."""
