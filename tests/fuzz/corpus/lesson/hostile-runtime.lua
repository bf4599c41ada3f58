-- hostile: a runtime error inside a step's claims
lesson{title = "runtime error", source = "000", section = "test",
  steps = {{text = "a step whose claims fail",
            claims = function(s)
              local t = nil
              return t.field
            end}}}
