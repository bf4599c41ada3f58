-- A fixture of the lesson pane (tests/tui/test_screen_pane.sh, tests/tui/test_layout.sh): one
-- step whose text is far longer than the pane has rows at 80x24, with a try-it and a check,
-- so the text scrolls above the try-it and its verdict, which stay on the pane's last rows.
local text = {}
for i = 1, 30 do
  text[#text + 1] = string.format("Sentence %d of a text too long for the pane.", i)
end
text[1] = "The first line of the long text."
text[30] = "The last line of the long text."

lesson{
  title = "A long text above its try-it",
  source = "000_fixture.txt",
  section = "fixture",
  steps = {
    {text = table.concat(text, "\n\n"), set = {x = {1, 2, 3, 4}}, focus = "output",
     try = {text = [[Make the mean of x 10 (set{x = {7, 9, 11, 13}}).]],
            check = function(s)
              local m = s.x:mean()
              return math.abs(m - 10) < 1e-9 or string.format("the mean is %g", m)
            end}},
  },
}
