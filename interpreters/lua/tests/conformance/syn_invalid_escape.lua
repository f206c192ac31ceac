local s = "\q"
