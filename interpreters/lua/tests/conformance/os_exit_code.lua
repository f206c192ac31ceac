io.write("before exit\n")
os.exit(3)
print("never")
