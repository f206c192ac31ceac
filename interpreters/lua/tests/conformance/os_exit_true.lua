print("exiting with true")
os.exit(true)
