"""`manage.py import_queries PROJECT FILE`: queries from CSV or JSONL, all or nothing.

Columns / keys: query_id and text (required), information_need. A changed text or information
need flags the query's grades in open sets for re-checking.
"""

from __future__ import annotations

from annotator.documents.readers import read_queries
from annotator.documents.services import queries_import
from annotator.management.commands._grading_import import RecordImportCommand


class Command(RecordImportCommand):
    help = "Import queries (CSV or JSONL) into a project, all or nothing."
    noun = ("query", "queries")
    reader = staticmethod(read_queries)
    importer = staticmethod(queries_import)
