-- rng.lua: ns.rng against draws made by numpy.random.default_rng (numpy 1.24), and
-- ns.sha256 against the FIPS 180-2 examples; argument errors.
local T = dofile((arg and arg[0] or "tests/lua/rng.lua"):gsub("[^/]*$", "") .. "tap.lua")
local ns = T.ns

-- numpy: g = default_rng(0); g.random(3); g.normal(1, 2, 2)
local g = ns.rng(0)
T.all_close(g:random(3), {0.6369616873214543, 0.2697867137638703, 0.04097352393619469}, 0,
  "random(3) bit-exact with numpy seed 0")
T.all_close(g:normal(1, 2, 2), {1.2098002343060794, -0.07133874632222192}, 0,
  "normal(1, 2, 2) continues the same stream")
-- numpy: default_rng(124).normal(3, 2, (2, 3))
local n = ns.rng(124):normal(3, 2, {2, 3})
T.is(table.concat(n:shape(), ","), "2,3", "shape argument")
T.all_close(n, {2.39875184, 1.84307171, 0.77886661, 0.62904805, 4.62297862, 4.21649002}, 5e-9,
  "normal with a shape fills row-major")
-- seeds above 2^53 as decimal strings; numpy: default_rng(2**64 + 13).random(2)
T.all_close(ns.rng("18446744073709551629"):random(2), {0.6977369639563015, 0.31138129509919144},
  0, "decimal-string seed above 2^64")
T.all_close(ns.rng("123456789012345678901234567890"):standard_normal(2),
  {1.1515931455551374, -2.683823715430791}, 0, "standard_normal with a 97-bit seed")
T.is(ns.rng(5):random(), ns.rng("5"):random(), "integer and string seeds agree")
T.is(type(ns.rng(1):normal()), "number", "no size: one number")
local u = ns.rng(9):random(1000)
T.ok(u:min() >= 0 and u:max() < 1, "random() in [0, 1)")
T.is(type(ns.rng():random()), "number", "unseeded generator works")

T.err("seed must be >= 0", "negative seed", ns.rng, -1)
T.err("pass it as a decimal string", "float seed above 2^53", ns.rng, 2 ^ 60 + 0.0)
T.err("non-negative integer", "fractional seed", ns.rng, 1.5)
T.err("only decimal digits", "non-digit seed string", ns.rng, "12a")
T.err("seed must be an integer or a decimal string", "table seed", ns.rng, {})
T.err("scale must be >= 0", "negative scale", function() return ns.rng(1):normal(0, -1, 3) end)
T.err("loc must be a number", "bad loc", function() return ns.rng(1):normal("a") end)
T.err("positive integer", "zero size", function() return ns.rng(1):random(0) end)
T.err("too many elements", "huge shape", function() return ns.rng(1):random({1e5, 1e5, 1e5}) end)

-- SHA-256 (FIPS 180-2 appendix B and the empty string)
T.is(ns.sha256("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", "sha256('abc')")
T.is(ns.sha256(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", "sha256('')")
T.is(ns.sha256("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
  "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1", "sha256 two blocks")
T.is(tonumber(ns.sha256("c15-running-state"):sub(1, 8), 16), 316832669,
  "seed of c15-running-state from its name")
T.err("string expected", "sha256 of a number", ns.sha256, 5)

T.done()
