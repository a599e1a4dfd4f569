"""A headless desktop for tests: an X server (Xvfb) and a private D-Bus session bus.

Tests that need what a real desktop gives an application (notifications, a tray, the colour scheme the
desktop asks for) start one here and put their own services on its bus.  Xvfb picks a free display
itself (-displayfd) and listens on no TCP port; the bus is a fresh `dbus-daemon --session` on a Unix
socket, so nothing reaches the person's own desktop or session.  Debian's packages: xvfb, dbus
(`make system-deps` installs them).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field

TOOLS = ("Xvfb", "dbus-daemon")
STOP_TIMEOUT_S = 10


@dataclass
class HeadlessDesktop:
    """The display and bus of a running headless desktop, and the processes started on it."""

    display: str
    """The X display, e.g. ":7"."""
    bus: str
    """The session bus address (DBUS_SESSION_BUS_ADDRESS)."""
    started: list[subprocess.Popen[bytes]] = field(default_factory=list)

    def env(self, **extra: str) -> dict[str, str]:
        """This process's environment pointed at this desktop (plus `extra`)."""
        return {**os.environ, "DISPLAY": self.display, "DBUS_SESSION_BUS_ADDRESS": self.bus, **extra}

    def start(self, *command: str) -> subprocess.Popen[bytes]:
        """Run `command` on this desktop, quietly; it is stopped with the desktop."""
        process = subprocess.Popen(list(command), env=self.env(), stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL)
        self.started.append(process)
        return process


def missing_tools(*extra: str) -> list[str]:
    """The programs of TOOLS (and `extra`) not on PATH."""
    return [tool for tool in (*TOOLS, *extra) if shutil.which(tool) is None]


@contextlib.contextmanager
def headless_desktop(screen: str = "1024x768x24", *, bus: bool = True) -> Iterator[HeadlessDesktop]:
    """Xvfb (its screen WxHxDEPTH) and a session bus (unless `bus` is False) for the `with` block; both (and
    what was started on them) stopped after."""
    desktop = HeadlessDesktop(display="", bus="")
    try:
        read, write = os.pipe()
        xvfb = subprocess.Popen(["Xvfb", "-displayfd", str(write), "-nolisten", "tcp", "-screen", "0", screen],
                                pass_fds=(write,), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        desktop.started.append(xvfb)
        os.close(write)
        with os.fdopen(read) as pipe:
            desktop.display = f":{pipe.readline().strip()}"
        if not bus:
            yield desktop
            return
        bus_daemon = subprocess.Popen(["dbus-daemon", "--session", "--nofork", "--print-address=1"],
                                      stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        desktop.started.append(bus_daemon)
        assert bus_daemon.stdout is not None
        desktop.bus = bus_daemon.stdout.readline().decode().strip()
        bus_daemon.stdout.close()
        yield desktop
    finally:
        for process in reversed(desktop.started):
            process.terminate()
            try:
                process.wait(timeout=STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=STOP_TIMEOUT_S)
