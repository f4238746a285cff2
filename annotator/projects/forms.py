from __future__ import annotations

from typing import Any

from django import forms
from django.contrib.auth import get_user_model
from django.utils.translation import gettext_lazy as _

from annotator.models import Membership, Project, Role
from evaluation.formats.values import is_plain_integer


class DigitsIntegerField(forms.IntegerField):
    """A whole number written with the digits 0-9, the one rule for K, seeds and counts in the
    app, the command line and the files: IntegerField alone takes full-width or Arabic-Indic
    digits and "10.0", which the command line refuses."""

    default_error_messages = {"invalid": _("“%(value)s” is not a whole number written with the digits 0-9.")}

    def to_python(self, value: Any) -> int | None:
        if isinstance(value, str):
            value = value.strip()
            if value and not is_plain_integer(value):
                raise forms.ValidationError(
                    self.error_messages["invalid"], code="invalid", params={"value": value}
                )
        return super().to_python(value)


class MemberAddForm(forms.Form):
    username = forms.CharField(label=_("Username"), max_length=150)
    role = forms.ChoiceField(label=_("Role"), choices=Role.choices, initial=Role.EDITOR)

    def __init__(self, *args: Any, project: Project, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.project = project

    def clean_username(self) -> Any:
        username = self.cleaned_data["username"].strip()
        user = get_user_model().objects.filter(username=username, is_active=True).first()
        if user is None:
            raise forms.ValidationError(
                _(
                    "No active user is called “%(username)s”. Ask an administrator to create the account "
                    "first, with the command “python manage.py create_user %(username)s”."
                ),
                params={"username": username},
            )
        if Membership.objects.filter(project=self.project, user=user).exists():
            raise forms.ValidationError(
                _("%(username)s is already a member of this project."), params={"username": username}
            )
        return user

    def save(self) -> Membership:
        return Membership.objects.create(
            project=self.project, user=self.cleaned_data["username"], role=self.cleaned_data["role"]
        )


class ProjectSettingsForm(forms.ModelForm):
    """What an owner may change about the project. The slug is not here: it is in every link,
    bookmark and export name made so far."""

    class Meta:
        model = Project
        fields = ["name", "name_zh_hans", "description", "content_language"]
        widgets = {"description": forms.Textarea(attrs={"rows": 3})}


class MemberRoleForm(forms.Form):
    # The last-owner rule is checked by membership_set_role, under a lock (a form check could race).
    role = forms.ChoiceField(label=_("Role"), choices=Role.choices)
