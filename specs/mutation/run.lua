-- specs/mutation/run.lua: prove the spec suite catches every broken change.
--
-- Usage (from anywhere; lua5.4 and busted on PATH, the project buildable):
--   lua5.4 specs/mutation/run.lua [--work DIR] [--only NAME[,NAME...]] [--list]
--
-- Copies the source to a scratch tree (DIR/tree, default build/mutation),
-- builds it once (DIR/build) and runs the whole suite there unmutated (it
-- must pass, or every mutant would look killed).  Then for each mutant in
-- mutants.lua: applies its exact search-and-replace (the text must occur
-- exactly once), rebuilds incrementally, runs the mutant's hinted spec file
-- and, if that did not fail, the whole spec suite and the C tests; records
-- killed (something failed) or survived; restores the file.  Prints a table
-- and a score line; exits 1 if any mutant survived, did not apply or did not
-- build, 2 on a usage or set-up error.
local function script_dir()
  local src = debug.getinfo(1, "S").source:sub(2)
  return src:match("^(.*)/[^/]*$") or "."
end

local function sh(s) return "'" .. tostring(s):gsub("'", [['\'']]) .. "'" end

-- Run a shell command; returns ok, output (stdout and stderr together).
local function run(cmd)
  local p = assert(io.popen(cmd .. " 2>&1"))
  local out = p:read("a")
  local ok = p:close()
  return ok == true, out
end

local function read(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("a")
  f:close()
  return s
end

local function write(path, s)
  local f = assert(io.open(path, "wb"))
  f:write(s)
  f:close()
end

local function count(hay, needle)
  local n, at = 0, 1
  while true do
    local i = hay:find(needle, at, true)
    if not i then return n end
    n, at = n + 1, i + 1
  end
end

local function die(msg)
  io.stderr:write("mutation: ", msg, "\n")
  os.exit(2)
end

-- Arguments ----------------------------------------------------------------
local root = script_dir() .. "/../.."
local ok_root, abs = run("cd " .. sh(root) .. " && pwd")
if not ok_root then die("cannot find the source root") end
root = abs:gsub("%s+$", "")
local work, only, list = root .. "/build/mutation", nil, false
local i = 1
while arg[i] do
  local a = arg[i]
  if a == "--work" then work = arg[i + 1]; i = i + 1
  elseif a == "--only" then
    only = {}
    for n in (arg[i + 1] or ""):gmatch("[^,]+") do only[n] = true end
    i = i + 1
  elseif a == "--list" then list = true
  else die("unknown argument " .. a .. " (see the header of this file)") end
  i = i + 1
end

local mutants = dofile(script_dir() .. "/mutants.lua")
if list then
  for _, m in ipairs(mutants) do print(string.format("%-40s step %-4s %s", m.name, m.step, m.file)) end
  os.exit(0)
end
local selected = {}
for _, m in ipairs(mutants) do
  if not only or only[m.name] then selected[#selected + 1] = m end
end
if only then
  for n in pairs(only) do
    local found = false
    for _, m in ipairs(mutants) do found = found or m.name == n end
    if not found then die("no mutant named " .. n) end
  end
end

-- The scratch tree and its build -----------------------------------------
local tree, build, tmp = work .. "/tree", work .. "/build", work .. "/tmp"
local busted = os.getenv("BUSTED") or "/usr/bin/busted"
local t0 = os.time()

-- Every file git tracks or would track (the working tree as it is, so an
-- uncommitted change is judged too); a plain copy outside a git checkout.
local ok, out = run("rm -rf " .. sh(tree) .. " && mkdir -p " .. sh(tree) .. " " .. sh(tmp)
  .. " && cd " .. sh(root) .. " && if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then"
  .. " git ls-files -z -co --exclude-standard | xargs -0 cp --parents -t " .. sh(tree) .. ";"
  .. " else for f in CMakeLists.txt .busted cmake src lua specs examples; do"
  .. " [ -e \"$f\" ] && cp -a \"$f\" " .. sh(tree) .. "/; done; fi")
if not ok then die("copying the source failed:\n" .. out) end
ok, out = run("cmake -S " .. sh(tree) .. " -B " .. sh(build) .. " -DCMAKE_BUILD_TYPE=RelWithDebInfo"
  .. " -DLEASE_BUILD_TESTS=ON -DLEASE_WERROR=ON -DLEASE_INSTALL=OFF")
if not ok then die("configuring the scratch tree failed:\n" .. out) end

local function build_tree()
  return run("cmake --build " .. sh(build) .. " -j2")
end

-- The environment ctest gives the specs, pointed at the scratch tree.
local env = "cd " .. sh(tree) .. " && env LEASE_BUILD_DIR=" .. sh(build) .. " LEASE_SOURCE_DIR="
  .. sh(tree) .. " LEASE_TEST_TMP=" .. sh(tmp) .. " LEASE_SQLITE3=sqlite3 "

-- Mutants of the PostgreSQL backend (backend = "pg") are judged by the
-- suite on PostgreSQL: one throwaway cluster (scripts/pg-cluster) for the
-- whole run, started at the first such mutant and stopped at the end.
local pg_dir, pg_conninfo = work .. "/pg", nil
local function pg_env()
  if not pg_conninfo then
    local started, ci = run(sh(root .. "/scripts/pg-cluster") .. " start " .. sh(pg_dir))
    if not started then die("the PostgreSQL cluster did not start:\n" .. ci) end
    pg_conninfo = ci:match("host=[^\n]+")
  end
  return "LEASE_TEST_PG=" .. sh(pg_conninfo) .. " "
end
local function pg_stop()
  if pg_conninfo then run(sh(root .. "/scripts/pg-cluster") .. " stop " .. sh(pg_dir)) end
end

-- Run busted on files (all specs when nil), stopping at the first failure;
-- on PostgreSQL when backend is "pg".  Returns passed, a description of the
-- first failure.
local function run_specs(files, backend)
  local cmd = env .. (backend == "pg" and pg_env() or "") .. "timeout -k 30 900 lua5.4 " .. sh(busted)
    .. " --no-keep-going -o plainTerminal" .. (backend == "pg" and " --exclude-tags=sqlite,not_on_pg" or "")
  if files then cmd = cmd .. " " .. files end
  local passed, output = run(cmd)
  if passed then return true end
  local kind, file, line, name = output:match("\n(%a+) %-> ([^\n]-) @ (%d+)\n([^\n]*)")
  if kind then return false, string.format("%s:%s %s", file, line, name) end
  return false, (output:match("[^\n]*[Ee]rror[^\n]*") or "busted failed"):sub(1, 120)
end

-- Run the C test programs named (all of them when nil; test_pg_wire only
-- in a tree built with libpq).  Returns passed, the first failure.
local function run_c_tests(names)
  local all = { "test_core", "test_many", "test_queue", "test_rules" }
  if not names and io.open(build .. "/test_pg_wire", "rb") then all[#all + 1] = "test_pg_wire" end
  for _, t in ipairs(names or all) do
    local passed, output = run(env .. "timeout -k 30 300 " .. sh(build .. "/" .. t))
    if not passed then
      return false, "specs/c/" .. t .. ".c " .. (output:match("%[  FAILED  %] ([%w_]+)") or "failed")
    end
  end
  return true
end

io.write("mutation: baseline build and suite in ", tree, "\n")
ok, out = build_tree()
if not ok then die("the unmutated scratch tree does not build:\n" .. out) end
local passed, why = run_specs(nil)
if passed then passed, why = run_c_tests() end
if not passed then die("the unmutated suite fails, so no mutant can be judged: " .. tostring(why)) end

-- The mutants ----------------------------------------------------------------
local results, killed, bad = {}, 0, 0
for _, m in ipairs(selected) do
  local path = tree .. "/" .. m.file
  local original = read(root .. "/" .. m.file)
  -- one edit (from/to) or several (edits = {{from=, to=}, ...}), applied in
  -- order, each of whose text must occur exactly once when it is applied
  local edits = m.edits or { { from = m.from, to = m.to } }
  local mutated, stale = original, nil
  for k, ed in ipairs(edits) do
    local n = count(mutated, ed.from)
    if n ~= 1 then
      stale = string.format("search text %d found %d times in %s (must be once)", k, n, m.file)
      break
    end
    local s, e = mutated:find(ed.from, 1, true)
    mutated = mutated:sub(1, s - 1) .. ed.to .. mutated:sub(e + 1)
  end
  local r = { m = m }
  if stale then
    r.result, r.by = "stale", stale
  else
    write(path, mutated)
    local built, bout = build_tree()
    if not built then
      r.result, r.by = "nobuild", (bout:match("[^\n]*error:[^\n]*") or "build failed"):sub(1, 120)
    else
      local p1, w1 = true, nil
      -- c_hint: a C test program to run first (the spec hint's counterpart)
      if m.c_hint then p1, w1 = run_c_tests({ m.c_hint }) end
      if p1 and m.hint then p1, w1 = run_specs(m.hint, m.backend) end
      if p1 then p1, w1 = run_specs(nil, m.backend) end
      if p1 then p1, w1 = run_c_tests() end
      if p1 then r.result, r.by = "SURVIVED", "no spec failed"
      else r.result, r.by = "killed", w1 end
    end
    write(path, original)
  end
  if r.result == "killed" then killed = killed + 1 else bad = bad + 1 end
  results[#results + 1] = r
  io.write(string.format("  %-40s %-4s %-8s %s\n", m.name, m.step, r.result, r.by))
  io.flush()
end
-- Leave the scratch build matching the source again.
build_tree()
pg_stop()

print()
print(string.format("%-40s %-4s %-8s %s", "mutant", "step", "result", "killed by (first failing spec)"))
for _, r in ipairs(results) do
  print(string.format("%-40s %-4s %-8s %s", r.m.name, r.m.step, r.result, r.by))
end
print()
print(string.format("mutation score: %d/%d killed, %d survived or stale, in %d s",
  killed, #results, bad, os.time() - t0))
os.exit(bad == 0 and 0 or 1)
