-- hostile: an endless loop that tries to catch the end of its budget with pcall
while true do
  pcall(function() while true do end end)
end
