"""`belay watch`: the window over every supervised workspace, and the inbox across them."""
