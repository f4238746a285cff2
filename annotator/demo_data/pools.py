"""Demo data for the pools feature; called by annotator/management/commands/demo.py in order."""

from annotator.demo_data import DemoContext


def build(ctx: DemoContext) -> None:
    """Nothing yet: the pools issue extends the demo here."""
