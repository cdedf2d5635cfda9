-- luacheck configuration: `luacheck lua specs examples bench` (a ctest test).
std = "lua54"
max_line_length = 140
-- 'not (x > y)' is how this code says "x is NaN or not above y": keep it.
ignore = { "581" }

files["specs"] = {
  std = "+busted",
  -- spec tables hold SQL and expected messages verbatim, one case a row
  max_line_length = false,
}
-- each mutant's search text is one exact line of the source it mutates
files["specs/mutation/mutants.lua"] = { max_line_length = false }
-- the peer comparison's npm packages (bench/peers/setup) ship Redis scripts
exclude_files = { "bench/peers/*/node_modules/**" }
