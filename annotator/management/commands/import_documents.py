"""`manage.py import_documents PROJECT FILE`: documents from CSV or JSONL, all or nothing.

A re-import stores changed documents as a new version and flags their grades in open sets for
re-checking; unchanged documents are left alone.
"""

from __future__ import annotations

from annotator.documents.readers import read_documents
from annotator.documents.services import documents_import
from annotator.management.commands._grading_import import RecordImportCommand


class Command(RecordImportCommand):
    help = "Import documents (CSV or JSONL) into a project, all or nothing."
    noun = ("document", "documents")
    reader = staticmethod(read_documents)
    importer = staticmethod(documents_import)
