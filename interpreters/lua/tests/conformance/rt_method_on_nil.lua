local obj = nil
obj:method()
