# Hand-written: PostgreSQL refuses any UPDATE or DELETE of a frozen pool version or judgment,
# so even raw SQL (a psql session, a careless data migration) cannot change a pool under a score.
# The models and querysets refuse the same in Python on every database; SQLite has no such trigger
# because Django's test flush empties SQLite tables with DELETE (PostgreSQL uses TRUNCATE, which
# these row triggers do not fire on).

from django.db import migrations

TABLES = ("annotator_poolversion", "annotator_pooljudgment")

CREATE = """
CREATE OR REPLACE FUNCTION annotator_refuse_frozen_pool_change() RETURNS trigger AS $$
BEGIN
    RAISE EXCEPTION 'ranking-lab: % on % refused: frozen pool versions and their judgments are immutable',
        TG_OP, TG_TABLE_NAME
        USING ERRCODE = 'integrity_constraint_violation',
              HINT = 'Start a new pool version instead of changing a frozen one.';
END;
$$ LANGUAGE plpgsql;
""" + "".join(
    f"""
DROP TRIGGER IF EXISTS {table}_immutable ON {table};
CREATE TRIGGER {table}_immutable BEFORE UPDATE OR DELETE ON {table}
    FOR EACH ROW EXECUTE FUNCTION annotator_refuse_frozen_pool_change();
"""
    for table in TABLES
)

DROP = "".join(f"DROP TRIGGER IF EXISTS {table}_immutable ON {table};\n" for table in TABLES) + (
    "DROP FUNCTION IF EXISTS annotator_refuse_frozen_pool_change();\n"
)


def create_triggers(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(CREATE, params=None)  # None: keep psycopg off the % signs


def drop_triggers(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(DROP, params=None)


class Migration(migrations.Migration):
    dependencies = [
        ("annotator", "0003_pools_base_managers"),
    ]

    operations = [
        migrations.RunPython(create_triggers, drop_triggers),
    ]
