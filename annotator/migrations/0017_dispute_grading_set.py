# The dispute's set, copied from its pair (Dispute.grading_set): added empty, filled from the
# pairs, then required. SQLite rebuilds the table to require it, and refuses to rename the rebuilt
# table while the counter triggers name it: they are dropped first and created again after.

import django.db.models.deletion
from django.db import migrations, models

from annotator.grading import counters


def drop_triggers(apps, schema_editor):
    counters.drop(schema_editor.connection)


def install_triggers(apps, schema_editor):
    counters.install(schema_editor.connection)


FILL = """
UPDATE annotator_dispute SET grading_set_id = (
    SELECT c.grading_set_id FROM annotator_candidate c WHERE c.id = annotator_dispute.candidate_id
)
"""


class Migration(migrations.Migration):
    dependencies = [
        ("annotator", "0016_grading_counter_triggers"),
    ]

    operations = [
        migrations.RunPython(drop_triggers, install_triggers),
        migrations.AddField(
            model_name="dispute",
            name="grading_set",
            field=models.ForeignKey(
                editable=False,
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="+",
                to="annotator.gradingset",
            ),
        ),
        migrations.RunSQL(FILL, migrations.RunSQL.noop),
        migrations.AlterField(
            model_name="dispute",
            name="grading_set",
            field=models.ForeignKey(
                editable=False,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="+",
                to="annotator.gradingset",
            ),
        ),
        migrations.AddIndex(
            model_name="dispute",
            index=models.Index(
                fields=["grading_set", "status", "-severity", "opened_at", "id"], name="dispute_set_queue"
            ),
        ),
        migrations.RunPython(install_triggers, drop_triggers),
    ]
