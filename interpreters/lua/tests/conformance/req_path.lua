-- package.path decides where require looks
local saved = package.path
package.path = "./?.lua"
print(require("mod_simple").greet("path"))
package.path = "./nowhere/?.lua"
package.loaded.mod_dep = nil
print(pcall(require, "mod_dep") == false)
package.path = saved
print(type(require("mod_dep")))
