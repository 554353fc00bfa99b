"""The contracts a chat platform fills: `port.ChatPort` (reads and sends, the core's one way out to a chat world)
and `runtime.PlatformRuntime` (what an adapter gives `askwith serve`). Add a surface by filling both.
"""
