local t = undefinedtable.field
