"""Getting the person's attention when an agent waits: tray icon, desktop notifications, title count, sound.

Belay is meant to be left in the background, so a request that waits must reach the person when the
window is not the one they look at:

- the window title and the tray icon's tooltip and badge say how many requests wait;
- a new request, while the window is not active, becomes a desktop notification saying which agent
  wants what, with Approve (only for a low-impact call), Deny and Show where the notification server
  supports actions; answering in the window withdraws it;
- one bubble per agent: a second request from the same agent replaces its bubble with one that counts
  them ("lead: 3 requests waiting", the first few listed, Show only), and each answer updates or
  withdraws it; nothing stacks (Notify's `replaces_id`);
- an optional beep; a quiet mode that keeps the counts but stops notifications, beeps and the taskbar
  alert (the tray menu toggles both).

On Linux the notifications go to the freedesktop notification server (org.freedesktop.Notifications on
the session bus); elsewhere, or when no server owns that name, to Qt's tray message.  The D-Bus side
uses jeepney, not QtDBus: Notify's `replaces_id` is a uint32 and PySide6 marshals every Python int as
int32, which GDBus servers (dunst, notification-daemon) reject ("(sisssasa{sv}i) does not match expected
type (susssasa{sv}i)").  Servers address ActionInvoked to the connection that sent Notify, so sending
and listening share one connection (a jeepney router on the asyncio loop qasync shares with Qt).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, QRect, QSettings, Qt, Signal
from PySide6.QtGui import QAction, QColor, QFont, QGuiApplication, QIcon, QPainter, QPixmap
from PySide6.QtWidgets import QApplication, QMenu, QSystemTrayIcon, QWidget

from core import spawn
from gui.window.runtime.tasks import TaskSet

log = logging.getLogger(__name__)

if TYPE_CHECKING:
    from core import ApprovalRequested

APP_NAME = "Belay"
SERVICE = "org.freedesktop.Notifications"
OBJECT_PATH = "/org/freedesktop/Notifications"
CALL_TIMEOUT_S = 3.0
"""A notification server answers at once; one that does not is treated as absent."""
ACTIONS = ("approve", "deny", "show")
"""What a notification's buttons ask the window to do (the "default" action, a click on the bubble, is show)."""


def titled(title: str, waiting: int) -> str:
    """The window title with the count of waiting requests, as the hub window writes it."""
    return f"{title} · {waiting} waiting" if waiting else title


GROUP_LISTS = 3
"""How many of an agent's waiting requests its bubble names; the rest are counted."""


@dataclass(frozen=True)
class Notice:
    """One notification: which agent and request it is about, what it says and the buttons it offers."""

    key: str
    """The waiting call's id its buttons answer (for an agent's several requests: the oldest, which Show opens)."""
    summary: str
    body: str
    actions: tuple[tuple[str, str], ...]
    """(action key, button label), in order."""
    group: str = ""
    """The agent's id: one bubble per agent, each notice about it replaces the last."""


def notice_for(request: ApprovalRequested, who: str) -> Notice:
    """Which agent wants what; Approve only when the call's impact is low (the rest are looked at first)."""
    reasons = "; ".join(request.impact.reasons[:2])
    body = request.summary + (f"\n{request.impact.level} impact: {reasons}" if reasons else "")
    actions = [("default", "Show")]
    if request.impact.level == "low":
        actions.append(("approve", "Approve"))
    actions += [("deny", "Deny"), ("show", "Open in Belay")]
    return Notice(request.call_id, f"{who} wants {request.tool}", body, tuple(actions), request.agent_id)


def group_notice(requests: list[ApprovalRequested], who: str) -> Notice:
    """One agent's bubble: its one request as `notice_for` says it, or its several counted and the first few
    named, with Show only (several are answered in the window, each seen)."""
    if len(requests) == 1:
        return notice_for(requests[0], who)
    named = [f"{r.tool} {r.summary}" for r in requests[:GROUP_LISTS]]
    more = len(requests) - len(named)
    body = "\n".join(named) + (f"\nand {more} more" if more else "")
    first = requests[0]
    return Notice(first.call_id, f"{who}: {len(requests)} requests waiting", body,
                  (("default", "Show"), ("show", "Open in Belay")), first.agent_id)


class DesktopNotifier:
    """The freedesktop notification server on one D-Bus connection: notify, withdraw, hear actions."""

    def __init__(self, router: Any, stack: contextlib.AsyncExitStack, capabilities: list[str], server: str,
                 on_action: Callable[[str, str], None]) -> None:
        self._router = router
        self._stack = stack
        self.capabilities = capabilities
        self.server = server
        """The server's name (GetServerInformation), e.g. "dunst"."""
        self._on_action = on_action
        self._ids: dict[int, Notice] = {}
        """The notifications up: server id -> what it says."""
        self._numbers: dict[str, int] = {}
        """Each agent's bubble: group -> server id."""
        self._up_since: dict[str, float] = {}
        """When each group's bubble last changed what it says (monotonic), for `up_for`."""
        self._listener: asyncio.Task[None] | None = None

    @classmethod
    async def start(cls, on_action: Callable[[str, str], None], bus: str = "SESSION",
                    start_task: Callable[[Coroutine[Any, Any, None], str], asyncio.Task[None]] = spawn,
                    ) -> DesktopNotifier | None:
        """Connect to `bus` (an address, or "SESSION"); None when there is no bus or nobody serves notifications.
        `start_task` starts the task that hears the server (the window's TaskSet, so closing it ends the task)."""
        try:
            from jeepney import MatchRule, new_method_call
            from jeepney.bus_messages import message_bus
            from jeepney.io.asyncio import open_dbus_router
        except ImportError:  # not Linux: the tray's messages instead
            return None
        stack = contextlib.AsyncExitStack()
        try:
            router = await asyncio.wait_for(stack.enter_async_context(open_dbus_router(bus=bus)), CALL_TIMEOUT_S)
            owned = await cls._call(router, message_bus.NameHasOwner(SERVICE))
            if not owned.body[0]:
                await stack.aclose()
                return None
            rule = MatchRule(type="signal", interface=SERVICE, path=OBJECT_PATH)
            await cls._call(router, message_bus.AddMatch(rule))
            queue = stack.enter_context(router.filter(rule, bufsize=64))
            address = _address()
            capabilities = list((await cls._call(router, new_method_call(address, "GetCapabilities"))).body[0])
            server = str((await cls._call(router, new_method_call(address, "GetServerInformation"))).body[0])
        except (OSError, KeyError, ValueError, TimeoutError):
            await stack.aclose()  # no bus address, refused, or no answer
            return None
        notifier = cls(router, stack, capabilities, server, on_action)
        notifier._listener = start_task(notifier._listen(queue), "hear the notification server")
        return notifier

    @staticmethod
    async def _call(router: Any, message: Any) -> Any:
        """The server's reply; ConnectionError when the connection closes before it (the window closing while a
        bubble is updated: jeepney then raises RouterClosed, or a KeyError from its own bookkeeping)."""
        from jeepney.io.common import RouterClosed

        try:
            return await asyncio.wait_for(router.send_and_get_reply(message), CALL_TIMEOUT_S)
        except (RouterClosed, KeyError) as e:
            raise ConnectionError(f"the notification server's connection closed ({type(e).__name__})") from e

    async def notify(self, notice: Notice) -> int:
        """Show `notice`, replacing its group's bubble if one is up; the server's id for it (buttons only where
        the server has actions)."""
        from jeepney import new_method_call

        actions = [part for pair in notice.actions for part in pair] if "actions" in self.capabilities else []
        hints = {"urgency": ("y", 1), "category": ("s", "im.received")}
        replaces = self._numbers.get(notice.group, 0) if notice.group else 0
        body = (APP_NAME, replaces, "dialog-question", notice.summary, notice.body, actions, hints, 0)
        reply = await self._call(self._router, new_method_call(_address(), "Notify", "susssasa{sv}i", body))
        number = int(reply.body[0])
        before = self._ids.pop(replaces, None)
        self._ids[number] = notice
        if notice.group:
            self._numbers[notice.group] = number
        if before != notice:
            self._up_since[notice.group] = time.monotonic()
        return number

    def current(self, group: str) -> Notice | None:
        """What `group`'s bubble says now (None: it has none up)."""
        number = self._numbers.get(group)
        return self._ids.get(number) if number is not None else None

    def up_for(self, key: str) -> float:
        """How long a bubble offering to approve `key` has been on screen saying so, in seconds (0: none is)."""
        for group, number in self._numbers.items():
            notice = self._ids.get(number)
            if notice is not None and notice.key == key and any(a == "approve" for a, _ in notice.actions):
                return time.monotonic() - self._up_since.get(group, time.monotonic())
        return 0.0

    async def withdraw(self, group: str) -> None:
        """Close `group`'s bubble (its requests were answered, or went away)."""
        from jeepney import new_method_call

        number = self._numbers.pop(group, None)
        if number is not None:
            self._ids.pop(number, None)
            self._up_since.pop(group, None)
            await self._call(self._router, new_method_call(_address(), "CloseNotification", "u", (number,)))

    def shown(self) -> dict[int, str]:
        """The notifications still up: server id -> the call id its buttons answer."""
        return {number: notice.key for number, notice in self._ids.items()}

    async def _listen(self, queue: asyncio.Queue[Any]) -> None:
        while True:
            message = await queue.get()
            member = message.header.fields.get(3)  # HeaderFields.member
            if member == "ActionInvoked":
                number, action = message.body
                notice = self._ids.get(int(number))
                if notice is not None:
                    self._on_action(notice.key, "show" if action == "default" else str(action))
            elif member == "NotificationClosed":  # dismissed, expired, or closed by us
                closed = self._ids.pop(int(message.body[0]), None)
                if closed is not None and self._numbers.get(closed.group) == int(message.body[0]):
                    del self._numbers[closed.group]

    async def close(self) -> None:
        if self._listener is not None:
            self._listener.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._listener
        await self._stack.aclose()


def _address() -> Any:
    from jeepney import DBusAddress

    return DBusAddress(OBJECT_PATH, bus_name=SERVICE, interface=SERVICE)


def badge_icon(waiting: int, size: int = 64) -> QIcon:
    """Belay's tray icon: a shield-blue disc with a "B", and a red badge with the count while something waits."""
    pixmap = QPixmap(size, size)
    pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setPen(Qt.PenStyle.NoPen)
    painter.setBrush(QColor("#1f6feb"))
    painter.drawEllipse(2, 2, size - 4, size - 4)
    font = QFont()
    font.setBold(True)
    font.setPixelSize(size // 2)
    painter.setFont(font)
    painter.setPen(QColor("#ffffff"))
    painter.drawText(QRect(0, 0, size, size), Qt.AlignmentFlag.AlignCenter, "B")
    if waiting:
        badge = QRect(size // 2 - 2, 0, size // 2 + 2, size // 2 + 2)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(QColor("#cf222e"))
        painter.drawEllipse(badge)
        font.setPixelSize(size // 3 if waiting < 10 else size // 4)
        painter.setFont(font)
        painter.setPen(QColor("#ffffff"))
        painter.drawText(badge, Qt.AlignmentFlag.AlignCenter, str(waiting) if waiting < 100 else "99+")
    painter.end()
    return QIcon(pixmap)


class Attention(QObject):
    """One window's way of calling the person: counts, notifications, tray, beep, quiet mode."""

    action_requested = Signal(str, str)
    """(call id, "approve" | "deny" | "show"): a notification's button (or the tray's Show) was used."""
    counts_changed = Signal(int)
    quit_requested = Signal()
    """The tray menu's Quit: leave for good, even with agents attached."""

    def __init__(self, window: QWidget, tasks: TaskSet, bus: str | None = None,
                 settings: QSettings | None = None) -> None:
        """`bus`: the D-Bus address for notifications (None: the session bus, except on the offscreen
        platform, which has no desktop to notify); `settings`: where quiet and sound are remembered."""
        super().__init__(window)
        self._window = window
        self._tasks = tasks
        self.waiting = 0
        self.quiet = False
        self.sound = False
        self.tray: QSystemTrayIcon | None = None
        self.notifier: DesktopNotifier | None = None
        self._started: asyncio.Task[Any] | None = None
        self._bus = bus if bus is not None else (
            None if QGuiApplication.platformName() == "offscreen" or os.name != "posix" else "SESSION")
        self.quiet_action = QAction("Quiet (no notifications or sound)", self, checkable=True)
        self.quiet_action.toggled.connect(self._on_quiet_action_toggled)
        self.sound_action = QAction("Sound on a new request", self, checkable=True)
        self.sound_action.toggled.connect(self._on_sound_action_toggled)
        self.notified: list[Notice] = []
        """Every notice sent (desktop or tray), newest last: what the person was told."""
        self._requests: dict[str, tuple[ApprovalRequested, str]] = {}
        """Every request told of (`requested`) and still waiting (`keep_only`): call id -> (request, who)."""
        self._sending = asyncio.Lock()
        """One Notify at a time: each replaces its agent's bubble, so two sent at once would stack."""
        self._settings = settings
        if settings is not None:
            self.set_quiet(bool(settings.value("attention/quiet", False, type=bool)))  # typed `object` by PySide6
            self.set_sound(bool(settings.value("attention/sound", False, type=bool)))

    def use_bus(self, bus: str | None) -> None:
        """Send notifications over `bus` (a D-Bus address) from now on; None: none at all."""
        self._bus = bus
        self._started = None
        self.notifier = None

    def settings_value(self, key: str) -> object:
        return self._settings.value(key) if self._settings is not None else None

    def set_settings_value(self, key: str, value: object) -> None:
        if self._settings is not None:
            self._settings.setValue(key, value)

    # -- the tray --------------------------------------------------------------

    def show_tray(self) -> bool:
        """Put Belay's icon in the system tray (once); False where the desktop has no tray."""
        if self.tray is None and QSystemTrayIcon.isSystemTrayAvailable():
            self.tray = QSystemTrayIcon(badge_icon(self.waiting), self)
            menu = QMenu()
            menu.addAction("Show Belay", self.raise_window)
            menu.addSeparator()
            menu.addAction(self.quiet_action)
            menu.addAction(self.sound_action)
            menu.addSeparator()
            menu.addAction("Quit Belay", self.quit_requested.emit)
            self.tray.setContextMenu(menu)
            self._tray_menu = menu
            self.tray.activated.connect(self._on_tray_activated)
            self.tray.messageClicked.connect(self._on_tray_message_clicked)
            self._update_tray()
            self.tray.show()
        return self.tray is not None

    def tooltip(self) -> str:
        return f"Belay — {self.waiting} waiting" if self.waiting else "Belay — nothing waiting"

    def _update_tray(self) -> None:
        if self.tray is not None:
            self.tray.setIcon(badge_icon(self.waiting))
            self.tray.setToolTip(self.tooltip())

    def _on_tray_activated(self, reason: QSystemTrayIcon.ActivationReason) -> None:
        if reason in (QSystemTrayIcon.ActivationReason.Trigger, QSystemTrayIcon.ActivationReason.DoubleClick):
            self.raise_window()

    def _on_tray_message_clicked(self) -> None:
        if self.notified:
            self.action_requested.emit(self.notified[-1].key, "show")

    def up_for(self, key: str) -> float:
        """How long the desktop notification about `key` has been on screen (0: none is)."""
        return self.notifier.up_for(key) if self.notifier is not None else 0.0

    def raise_window(self) -> None:
        top = self._window.window()
        top.showNormal()
        if QGuiApplication.platformName() != "offscreen":  # no stacking there (Qt warns that it cannot raise)
            top.raise_()
        top.activateWindow()

    def _on_quiet_action_toggled(self, on: bool) -> None:
        self.quiet = on
        if self._settings is not None:
            self._settings.setValue("attention/quiet", on)

    def _on_sound_action_toggled(self, on: bool) -> None:
        self.sound = on
        if self._settings is not None:
            self._settings.setValue("attention/sound", on)

    def set_quiet(self, on: bool) -> None:
        self.quiet_action.setChecked(on)

    def set_sound(self, on: bool) -> None:
        self.sound_action.setChecked(on)

    # -- requests --------------------------------------------------------------

    def set_waiting(self, waiting: int) -> None:
        """How many requests wait now (the approval panel's count)."""
        if waiting != self.waiting:
            self.waiting = waiting
            self._update_tray()
            self.counts_changed.emit(waiting)

    def requested(self, request: ApprovalRequested, who: str) -> None:
        """A new request: call the person unless they are looking at the window or asked for quiet; its agent's
        bubble, if one is up, counts it either way."""
        self._requests[request.call_id] = (request, who)
        if self.quiet:
            return
        if self._window.window().isActiveWindow():
            self._tasks.spawn(self._show_group(request.agent_id, call=False), "update a notification")
            return
        QApplication.alert(self._window.window())
        if self.sound:
            QApplication.beep()
        self._tasks.spawn(self._show_group(request.agent_id, call=True), "notify the desktop")

    def keep_only(self, waiting: set[str]) -> None:
        """Requests answered (anywhere) or gone: their agents' bubbles count fewer, or go (also one the server
        is still putting up: sending is serialised, and reads what waits when it sends)."""
        gone = {r.agent_id for key, (r, _) in self._requests.items() if key not in waiting}
        self._requests = {key: told for key, told in self._requests.items() if key in waiting}
        for group in gone:
            self._tasks.spawn(self._show_group(group, call=False), "update a notification")

    async def start(self) -> DesktopNotifier | None:
        """Connect to the notification server (once; later calls wait for the first)."""
        if self._bus is None:
            return None
        if self._started is None:
            connecting = DesktopNotifier.start(self._on_notifier_action, self._bus, self._tasks.spawn)
            self._started = self._tasks.spawn(connecting, "connect to the notification server")
        self.notifier = await self._started
        return self.notifier

    def waiting_of(self, group: str) -> list[ApprovalRequested]:
        """The requests of one agent still waiting, oldest first, as its bubble counts them."""
        return [request for request, _ in self._requests.values() if request.agent_id == group]

    async def _show_group(self, group: str, *, call: bool) -> None:
        """Bring `group`'s bubble up to date with what waits now: put it up (`call`: a new request asks for the
        person), replace it, or withdraw it.  An update never brings back a bubble the person closed."""
        async with self._sending:
            notifier = await self.start()
            requests = self.waiting_of(group)
            who = next((w for r, w in reversed(self._requests.values()) if r.agent_id == group), "")
            notice = group_notice(requests, who) if requests else None
            if notifier is None:
                if call and notice is not None:
                    self.notified.append(notice)
                    if self.tray is not None and QSystemTrayIcon.supportsMessages():  # replaces the last message
                        self.tray.showMessage(notice.summary, notice.body, QSystemTrayIcon.MessageIcon.Information,
                                              15_000)
                return
            shown = notifier.current(group)
            try:
                if notice is None:
                    await notifier.withdraw(group)
                elif (call or shown is not None) and notice != shown:
                    self.notified.append(notice)
                    await notifier.notify(notice)
            except (ConnectionError, TimeoutError) as e:  # closing, or the server went away: nothing left to show
                log.info("notification for %s not updated: %s", group, e)

    def _on_notifier_action(self, key: str, action: str) -> None:
        if action in ACTIONS:
            self.action_requested.emit(key, action)

    async def aclose(self) -> None:
        """Close the connection to the notification server (if one was made) and hide the tray icon."""
        started, self._started = self._started, None
        if started is not None:
            if not started.done():
                await started
            notifier = None if started.cancelled() or started.exception() else started.result()
            if notifier is not None:
                await notifier.close()
        if self.tray is not None:
            self.tray.hide()
