# Hand-written: the triggers that keep the grading counters (annotator/grading/counters.py holds
# their one definition, for both databases), then every counter computed from the rows there are.

from django.db import migrations

from annotator.grading import counters


def forwards(apps, schema_editor):
    counters.install(schema_editor.connection)
    counters.recount(schema_editor.connection)


def backwards(apps, schema_editor):
    counters.drop(schema_editor.connection)


class Migration(migrations.Migration):
    dependencies = [
        ("annotator", "0015_grading_counters"),
    ]

    operations = [
        migrations.RunPython(forwards, backwards),
    ]
