"""What a screen reader gets from server-rendered HTML, approximated with the standard library.

Enough of the accessible name and description computation for the controls our templates render:
a control's name is its own text without `aria-hidden` parts (or an `aria-label`, or the text of
its <label for=...>); its description is the text of the elements its `aria-describedby` names.
No browser needed, so these checks run with the other view tests.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from html.parser import HTMLParser

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
CONTROLS = {"button", "input", "select", "textarea"}


def squash(text: str) -> str:
    return " ".join(text.split())


@dataclass
class Control:
    tag: str
    attrs: dict[str, str]
    text: str = ""  # its content as assistive technology reads it: aria-hidden parts left out


@dataclass
class _Open:
    tag: str
    attrs: dict[str, str]
    control: Control | None
    every: list[str] = field(default_factory=list)  # all text (a description may point at hidden text)
    heard: list[str] = field(default_factory=list)  # text outside aria-hidden parts


class _Reader(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[_Open] = []
        self.texts: dict[str, str] = {}
        self.labels: dict[str, str] = {}
        self.controls: list[Control] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {k: v or "" for k, v in attrs}
        control = Control(tag, values) if tag in CONTROLS else None
        if control is not None:
            self.controls.append(control)
        if tag not in VOID:
            self.stack.append(_Open(tag, values, control))

    def handle_endtag(self, tag: str) -> None:
        if all(node.tag != tag for node in self.stack):
            return  # a stray end tag closes nothing
        while self.stack:
            node = self.stack.pop()
            every = squash(" ".join(node.every))
            heard = "" if node.attrs.get("aria-hidden") == "true" else squash(" ".join(node.heard))
            if node.attrs.get("id"):
                self.texts[node.attrs["id"]] = every
            if node.control is not None:
                node.control.text = heard
            if node.tag == "label" and node.attrs.get("for"):
                self.labels[node.attrs["for"]] = heard
            if self.stack:
                self.stack[-1].every.append(every)
                self.stack[-1].heard.append(heard)
            if node.tag == tag:
                break

    def handle_data(self, data: str) -> None:
        if self.stack:
            self.stack[-1].every.append(data)
            self.stack[-1].heard.append(data)


class Page:
    """One rendered page or fragment, read the way assistive technology reads its controls."""

    def __init__(self, html: str) -> None:
        reader = _Reader()
        reader.feed(html)
        reader.close()
        self._reader = reader

    def text_of(self, element_id: str) -> str:
        return self._reader.texts.get(element_id, "")

    def controls(self, tag: str, **attrs: str) -> list[Control]:
        return [
            c
            for c in self._reader.controls
            if c.tag == tag and all(c.attrs.get(k) == v for k, v in attrs.items())
        ]

    def name(self, control: Control) -> str:
        if "aria-label" in control.attrs:
            return squash(control.attrs["aria-label"])
        if control.tag == "button":
            return control.text
        return self._reader.labels.get(control.attrs.get("id", ""), "")

    def description(self, control: Control) -> str:
        ids = control.attrs.get("aria-describedby", "").split()
        return squash(" ".join(self.text_of(i) for i in ids))
