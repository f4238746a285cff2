"""Demo data for runs and comparisons; called by annotator/management/commands/demo.py last."""

from annotator.demo_data import DemoContext


def build(ctx: DemoContext) -> None:
    """Nothing yet: the comparisons issue extends the demo here."""
