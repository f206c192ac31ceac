-- a module that returns nothing (not a test program itself)
mod_noreturn_ran = (mod_noreturn_ran or 0) + 1
