"""A console on another host: its core runs headless where the files are (`belay serve`), the person's window
or terminal attaches to it through the user's own ssh (core.remote.ssh), speaking core.remote.protocol."""
