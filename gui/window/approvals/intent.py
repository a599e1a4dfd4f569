"""Why the agent makes the call, on the approval card: its last words before it, and the prompt it works on.

A few lines (`SHORT_LINES`, `SHORT_CHARS`), so that the diff keeps its room on a 640-pixel window; "more"
shows them whole (as Belay keeps them: the recorder caps them), "less" folds them again.  Hidden when the
agent said nothing Belay read (an agent whose transcript Belay does not follow, Belay's own scripted agent).
"""

from __future__ import annotations

import html

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QWidget

from core import Intent
from gui.window.kit import theme

SHORT_LINES = 3
SHORT_CHARS = 280
PROMPT_CHARS = 160


def short(text: str, lines: int = SHORT_LINES, chars: int = SHORT_CHARS) -> tuple[str, bool]:
    """`text` cut to a few lines and characters, and whether it was."""
    kept = "\n".join(text.strip().splitlines()[:lines])
    if len(kept) > chars:
        kept = kept[:chars].rstrip()
    cut = kept != text.strip()
    return kept + (" …" if cut else ""), cut


def intent_html(intent: Intent, whole: bool) -> str:
    """"It said: “…”  more" and "Working on: …"."""
    muted = theme.colour("muted")
    parts = []
    if intent.said:
        said, cut = (intent.said, False) if whole else short(intent.said)
        toggle = " <a href='less'>less</a>" if whole and short(intent.said)[1] else (" <a href='more'>more</a>"
                                                                                     if cut else "")
        text = html.escape(said).replace("\n", "<br>")
        parts.append(f"<span style='color:{muted}'>It said:</span> <i>“{text}”</i>{toggle}")
    if intent.prompt:
        prompt = intent.prompt if whole else short(intent.prompt, 1, PROMPT_CHARS)[0]
        parts.append(f"<span style='color:{muted}'>Working on:</span> {html.escape(prompt).replace(chr(10), '<br>')}")
    return "<br>".join(parts)


class IntentView(QLabel):
    """The agent's words above the call it asks for; a link shows them whole."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("approvalIntent")
        self.setWordWrap(True)
        self.setTextFormat(Qt.TextFormat.RichText)
        self.setTextInteractionFlags(Qt.TextInteractionFlag.TextBrowserInteraction)
        self.setAccessibleName("What the agent said before this call")
        self.linkActivated.connect(self._on_link_activated)
        self._intent: Intent | None = None
        self.whole = False
        """Whether the words are shown whole ("more")."""
        self.setVisible(False)

    def show_intent(self, intent: Intent | None) -> None:
        """Another request's intent (None: its agent said nothing Belay read): shown short."""
        if intent != self._intent:
            self.whole = False
        self._intent = intent
        self.setVisible(intent is not None)
        self.setText(intent_html(intent, self.whole) if intent is not None else "")

    def _on_link_activated(self, link: str) -> None:
        self.whole = link == "more"
        self.show_intent(self._intent)

    def __repr__(self) -> str:
        return f"<IntentView shown={self._intent is not None} whole={self.whole}>"
