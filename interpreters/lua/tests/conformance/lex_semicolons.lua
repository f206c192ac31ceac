;;; local a = 1; ; print(a);
do ; end
local function f() ; return 1; end
print(f());
