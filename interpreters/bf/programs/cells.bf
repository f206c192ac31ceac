                                    cell arithmetic: wrap around and multiply; print results as characters
-                                   cell 0 = 255
[>+<-]>                             move it to cell 1
+                                   wraps to 0
>++++++[<++++++++>-]<               cell 1 = 48 (digit zero)
.                                   print it
>+++++++[<+++++++>-]<-----------    48 plus 49 minus 11 = 86 (V)
.                                   print it
[-]++++++++++.                      newline
