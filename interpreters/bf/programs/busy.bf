                                    busy loops: 255 * 255 * 255 decrements; then print ! and a newline
-[>-[>-[-]<-]<-]                    three nested loops counting down from 255
>>>+++++++++++[<+++>-]<.            33 (!)
[-]++++++++++.                      newline
