print("ok")
x = = 1
