print("exiting with false")
os.exit(false)
