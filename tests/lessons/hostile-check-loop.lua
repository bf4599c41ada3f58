-- hostile: a try.check that never returns
lesson{title = "t", source = "000", section = "s",
       steps = {{text = "x", try = {text = "t", check = function(s) while true do end end,
                                    show = {eps = 0}}}}}
