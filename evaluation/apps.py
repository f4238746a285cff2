from django.apps import AppConfig


class EvaluationConfig(AppConfig):
    name = "evaluation"
    verbose_name = "Evaluation"

    def ready(self) -> None:
        from evaluation import overview  # noqa: F401  (registers the overview's comparisons section)
        from evaluation.jobs import register_kinds

        register_kinds()  # run uploads as background jobs
