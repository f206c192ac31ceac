function f() return ... end
