                                    nested loops: 26 lines; line k holds the first k letters of the alphabet
                                    cells: 0 line counter; 1 letters on this line; 2 saved count; 3 letter; 4 newline; 5 scratch
++++++++++[>++<-]>++++++[<+>-]<     cell 0 = 26
>>>>++++++++++<<<<                  cell 4 = 10
>+<                                 cell 1 = 1
[                                   for each line
  >>>>>++++++++[<<++++++++>>-]<<+   cell 3 = 65 (A) using cell 5
  <<[>>.+<<>+<-]                    print cell 1 letters counting up; count moves to cell 2
  >[<+>-]                           restore cell 1 from cell 2
  >[-]                              clear cell 3
  >.                                newline
  <<<+                              one more letter next line
  <-                                one line less
]
