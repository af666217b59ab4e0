// Placeholder entry point until the server exists.
print("feedback-host: not built yet")
