-- Text 002, Level 3 (mathematics and code), the subsection on the reduction index: statistics
-- per feature (index i summed out) against statistics per observation (index j summed out),
-- and the zeros each leaves along its own axis.
local X = {{1, 3, 7, 2}, {2, 5, 11, 4}, {4, 7, 13, 8}, {7, 9, 17, 10}, {11, 15, 23, 14}}

-- Largest |mean| of y along one axis (1: column means, 2: row means).
local function maxmean(y, axis) return y:mean({axis}):abs():max() end

-- A sequence batch: 2 sequences x 3 tokens x 4 features.
local SEQ = {{{1, 2, 3, 4}, {2, 4, 6, 8}, {0, 1, 0, 1}},
             {{5, 5, 6, 6}, {1, 0, 0, 0}, {9, 7, 5, 3}}}

lesson{
  title = "Level 3: which index is reduced",
  source = "002_22013a1826c4c83c.txt",
  section = "Level 3: the reduction index (batch norm against layer norm)",
  steps = {
    {text = [[
Write the batch as a matrix X with B rows (observations) and D columns
(features). Batch norm computes one mean and one variance per feature j,
summing over the observations i:

  mu_j = (1/B) sum_i X_ij     sigma_j^2 = (1/B) sum_i (X_ij - mu_j)^2
  Y_ij = gamma_j (X_ij - mu_j) / sqrt(sigma_j^2 + eps) + beta_j

The index i is reduced. The output panel's statistics line has D = 4
means (shape 1 x 4), and every column of Y has mean 0.
(Alt-3)]],
     set = {x = X, kind = "batch", axes = "default", eps = 1e-5, gamma = {}, beta = {}},
     focus = "output",
     claims = function(s) claim("n-bn-col-means", maxmean(result().y, 1)) end},

    {text = [[
Layer norm swaps the index: one mean and variance per observation i,
summing over the features j:

  mu_i = (1/D) sum_j X_ij     sigma_i^2 = (1/D) sum_j (X_ij - mu_i)^2

Now there are B = 5 statistics (shape 5 x 1), and every row of Y has
mean 0. (Alt-3)]],
     set = {kind = "layer"},
     focus = "output",
     claims = function(s) claim("n-ln-row-means", maxmean(result().y, 2)) end},

    {text = [[
The two kinds leave their zeros along different axes; the table has
both for each kind. The mean over all 20 outputs is 0 in both cases, so
a test that only looks at the global mean cannot tell which axis was
reduced, and a layout mistake would slip through. (F: figure)]],
     figure = function(s)
       local x = ns.tensor(X)
       local lines = {"kind    max|column mean|   max|row mean|   global mean"}
       for _, k in ipairs{"batch", "layer"} do
         local y = ns.normalize(x, {kind = k})
         lines[#lines + 1] = string.format("%-5s   %17.3g   %14.3g   %11.3g", k,
                                           maxmean(y, 1), maxmean(y, 2), y:mean())
       end
       return table.concat(lines, "\n")
     end,
     try = {text = [[
Make the mistake: keep kind batch but reduce the wrong axis
(set{kind = "batch", axes = {2}}). The global mean is still 0; check the
column means in the output and you will see they are not.]],
            check = function(s)
              if s.kind ~= "batch" then return "use kind batch" end
              local y = result().y
              if math.abs(y:mean()) > 1e-9 then return "the global mean is not 0 here" end
              return maxmean(y, 1) > 1e-3 or "the column means are 0: this is the right axis"
            end,
            hints = {"k and K step the kind (settings panel, Alt-2)",
                     [[set{kind = "batch", axes = {2}}]]},
            show = {kind = "batch", axes = {2}}}},

    {text = [[
Sequence data has shape batch x tokens x features. Layer norm then
works per token over its features (axis 3): here 2 sequences of 3 tokens
give 6 means. Each statistic belongs to one token: no output of a token
sees its neighbours, nor anything of the other sequence.
(Alt-3)]],
     set = {x = SEQ, kind = "layer", axes = "default"},
     focus = "output",
     try = {text = [[
Change every value of the last token of the second sequence (e.g. to
zeros, like padding). The outputs of the other five tokens stay exactly
as they were.]],
            check = function(s)
              local shp = s.x:shape()
              if #shp ~= 3 or shp[1] ~= 2 or shp[2] ~= 3 or shp[3] ~= 4 then
                return "keep the shape 2 x 3 x 4"
              end
              local y = result().y:flat()
              local y0 = ns.normalize(ns.tensor(SEQ), {kind = "layer", eps = s.eps}):flat()
              local f, changed = s.x:flat(), false
              local g = ns.tensor(SEQ):flat()
              for i = 21, 24 do changed = changed or f[i] ~= g[i] end
              if not changed then return "change the last token of sequence 2" end
              for i = 1, 20 do
                if f[i] ~= g[i] then return "change only that token" end
                if y[i] ~= y0[i] then return "token outputs moved: check the axes" end
              end
              return true
            end,
            hints = {"type into the input panel (Alt-1): the arrows move, a number and Enter set a cell",
                     [[set{x = {{{1, 2, 3, 4}, {2, 4, 6, 8}, {0, 1, 0, 1}}, {{5, 5, 6, 6}, {1, 0, 0, 0}, {0, 0, 0, 0}}}}]]},
            show = {x = {{{1, 2, 3, 4}, {2, 4, 6, 8}, {0, 1, 0, 1}},
                         {{5, 5, 6, 6}, {1, 0, 0, 0}, {0, 0, 0, 0}}}}}},
  },
}
