print(1)
--[[ never closed

