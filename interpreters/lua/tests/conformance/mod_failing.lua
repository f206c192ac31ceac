-- a module that raises an error (not a test program itself)
error("module failed on purpose")
