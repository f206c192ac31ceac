-- every string escape
print("a\tb", "a\\b", "q\"q", 'q\'q')
print(("\a\b\f\n\r\t\v"):byte(1, -1))
print("\65\066\0677", "\x41\x62\x7A", #"\0abc", ("\0"):byte())
print("\u{48}\u{49}", #"\u{7FF}", #"\u{FFFF}", #"\u{10FFFF}")
print("line1\
line2")
print("a\z
       b", "c\z   d")
print('\'', "\"", '\\n')
print(#"\255\254", ("\255"):byte())
