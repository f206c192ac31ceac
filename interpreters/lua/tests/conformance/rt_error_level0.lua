error("no position here", 0)
