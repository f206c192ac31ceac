local s = "\300"
