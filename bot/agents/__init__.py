"""Personal agents: InfoNav plans, mixed-memory tools, the conversation loop, recursion and consensus."""
