x = 1 set = nil
