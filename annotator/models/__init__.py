"""Models of the annotation app, one module per area; import from here."""

from annotator.models.projects import Membership, MembershipQuerySet, Project, ProjectQuerySet, Role

__all__ = ["Membership", "MembershipQuerySet", "Project", "ProjectQuerySet", "Role"]
