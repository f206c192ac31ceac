local ok, e = pcall(require, "no_such_module_xyz")
print(ok, (e:match("^module 'no_such_module_xyz' not found")))
ok, e = pcall(require, "mod_failing")
print(ok, (e:match("module failed on purpose")))
package.loaded.fake = {answer = 42}
print(require("fake").answer)
package.loaded.mod_simple = nil
local m = require("mod_simple")
print(type(m))
