-- specs/mutation/run.lua: prove the spec suite catches every broken change.
--
-- Usage (from anywhere; lua5.4 and busted on PATH, the project buildable):
--   lua5.4 specs/mutation/run.lua [--work DIR] [--only NAME[,NAME...]] [--list]
--                                 [--lanes N] [--check]
--   lua5.4 specs/mutation/run.lua --kills-from LOG [LOG...]
--
-- --kills-from reads the logs of earlier runs (a lane's log, or the output
-- of a whole run) and writes specs/mutation/kills.lua: for each mutant
-- killed by a spec, that spec's file and full test name.  A run tries that
-- one test first (busted --filter), so a mutant costs its rebuild and one
-- test, not its hint file up to the test that fails; a mutant the test no
-- longer kills (the test renamed or changed) is judged as without it.
--
-- --lanes N splits the mutants into N lanes, each a process of this script
-- with its own scratch tree, build, temporary files and PostgreSQL cluster
-- under DIR/laneK; each lane takes the next mutant no lane has taken yet.
-- Lane 1 runs the unmutated baseline; the others judge the same source.
-- A spec that fails only because the machine is loaded can make a mutant
-- look killed, never one survive, so lanes cannot hide a surviving mutant.
--
-- --check builds and runs nothing: it says of every mutant whether it
-- still applies and names its function (fn), and exits 1 if one does not.
--
-- Copies the source to a scratch tree (DIR/tree, default build/mutation),
-- builds it once (DIR/build) and runs the whole suite there unmutated (it
-- must pass, or every mutant would look killed).  Then for each mutant in
-- mutants.lua: applies its exact search-and-replace (the text must occur
-- exactly once in the definition the mutant names with fn, regions.lua, or
-- in the whole file without fn; a mutant whose function was renamed or
-- moved, or whose text left it, is reported stale saying which), rebuilds
-- incrementally, runs its C hint (c_hint), the test that killed it last
-- (kills.lua), its hinted spec file
-- and, if none of those failed, the whole spec suite and the C tests; records
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
local work, only, list, check = root .. "/build/mutation", nil, false, false
local lanes, lane, kills_from = 1, nil, nil
local i = 1
while arg[i] do
  local a = arg[i]
  if a == "--work" then work = arg[i + 1]; i = i + 1
  elseif a == "--lanes" then
    lanes = math.tointeger(tonumber(arg[i + 1]))
    if not lanes or lanes < 1 then die("--lanes takes a positive integer") end
    i = i + 1
  elseif a == "--lane" then
    -- internal: this process is lane K of N (K/N), started by --lanes
    local k, n = (arg[i + 1] or ""):match("^(%d+)/(%d+)$")
    if not k then die("--lane takes K/N") end
    lane = { k = tonumber(k), n = tonumber(n) }
    i = i + 1
  elseif a == "--only" then
    only = {}
    for n in (arg[i + 1] or ""):gmatch("[^,]+") do only[n] = true end
    i = i + 1
  elseif a == "--kills-from" then
    kills_from = { table.unpack(arg, i + 1) }
    if #kills_from == 0 then die("--kills-from takes the logs to read") end
    break
  elseif a == "--list" then list = true
  elseif a == "--check" then check = true
  else die("unknown argument " .. a .. " (see the header of this file)") end
  i = i + 1
end

local mutants = dofile(script_dir() .. "/mutants.lua")
local regions = dofile(script_dir() .. "/regions.lua")

-- --kills-from: the progress lines "  NAME STEP killed FILE:LINE TEST" of
-- the logs, the last one of each mutant kept, written as kills.lua.
if kills_from then
  local known, found = {}, {}
  for _, m in ipairs(mutants) do known[m.name] = true end
  for _, log in ipairs(kills_from) do
    for line in read(log):gmatch("[^\n]+") do
      local name, file, test = line:match("^%s+(%S+)%s+%S+%s+killed%s+(specs/[%w_%-/]+%.lua):%d+ (.+)$")
      if name and known[name] and not file:find("^specs/c/") then
        found[name] = { file = file, test = test }
      end
    end
  end
  local names = {}
  for name in pairs(found) do names[#names + 1] = name end
  table.sort(names)
  local out = { "-- specs/mutation/kills.lua: for each mutant, the spec test that killed it in",
    "-- an earlier run, tried first (run.lua).  Made by",
    "--   lua5.4 specs/mutation/run.lua --kills-from LOG [LOG...]",
    "-- from the logs of full runs; a mutant left out is judged by its hints.",
    "return {" }
  for _, name in ipairs(names) do
    out[#out + 1] = string.format("  [%q] = { file = %q, test = %q },", name, found[name].file, found[name].test)
  end
  out[#out + 1] = "}"
  write(script_dir() .. "/kills.lua", table.concat(out, "\n") .. "\n")
  print(string.format("kills.lua: %d of %d mutants", #names, #mutants))
  os.exit(0)
end
local kills_ok, kills = pcall(dofile, script_dir() .. "/kills.lua")
if not kills_ok then kills = {} end
if list then
  for _, m in ipairs(mutants) do print(string.format("%-40s step %-4s %s", m.name, m.step, m.file)) end
  os.exit(0)
end
local selected = {}
for _, m in ipairs(mutants) do
  if not only or only[m.name] then selected[#selected + 1] = m end
end
-- The next mutant to judge: in one process, each in turn; in a lane, the
-- next one no lane has taken yet, from a counter the lanes share (the file
-- DIR/../next, read and advanced under flock(1)), so a lane that meets
-- slow mutants takes fewer.
local taken = 0
local function next_mutant()
  if not lane then
    taken = taken + 1
    return selected[taken]
  end
  local counter = work .. "/../next"
  local p = assert(io.popen("flock " .. sh(counter .. ".lock")
    .. [[ sh -c 'n=$(cat "$1"); echo $((n + 1)) > "$1"; echo "$n"' sh ]] .. sh(counter)))
  local n = tonumber(p:read("a"):match("%d+"))
  p:close()
  return n and selected[n]
end
if only then
  for n in pairs(only) do
    local found = false
    for _, m in ipairs(mutants) do found = found or m.name == n end
    if not found then die("no mutant named " .. n) end
  end
end

-- Where edit k of a mutant applies in text (the file path): the offset of
-- its search text, which must occur exactly once in the definition named fn
-- (regions.lua) or, without fn, in the whole file.  Returns the offset, or
-- nil and why the mutant no longer applies.
local function locate(text, path, fn, from, k)
  if not fn then
    local n = count(text, from)
    if n ~= 1 then
      return nil, string.format("search text %d found %d times in %s (must be once)", k, n, path)
    end
    return (text:find(from, 1, true))
  end
  local defs = regions.find(text, path, fn)
  if #defs == 0 then
    return nil, string.format("%s no longer defines %s (renamed, or moved to another file?)", path, fn)
  end
  local hits, at = 0, nil
  for _, d in ipairs(defs) do
    local body = text:sub(d.first, d.last)
    local n = count(body, from)
    if n > 0 then hits, at = hits + n, d.first + body:find(from, 1, true) - 1 end
  end
  if hits == 1 then return at end
  if hits == 0 and count(text, from) > 0 then
    return nil, string.format("search text %d is no longer in %s but elsewhere in %s (moved?)", k, fn, path)
  end
  return nil, string.format("search text %d found %d times in %s of %s (must be once)", k, hits, fn, path)
end

-- --check: every selected mutant applies where it says, and names fn.
if check then
  local bad = 0
  for _, m in ipairs(selected) do
    local text = read(root .. "/" .. m.file)
    local why
    for n, ed in ipairs(m.edits or { { from = m.from, to = m.to } }) do
      local fn = ed.fn or m.fn
      local at
      at, why = locate(text, m.file, fn, ed.from, n)
      if not why and not fn then
        why = string.format("names no fn (its text %d is in %s)", n,
          tostring(regions.smallest(text, m.file, at, at + #ed.from - 1)))
      end
      if why then break end
      text = text:sub(1, at - 1) .. ed.to .. text:sub(at + #ed.from)
    end
    if why then
      bad = bad + 1
      print(string.format("%-40s %s", m.name, why))
    end
  end
  print(string.format("mutants: %d of %d apply and name their function", #selected - bad, #selected))
  os.exit(bad == 0 and 0 or 1)
end

-- Lanes: this process starts one process per lane and waits for all of
-- them; their tables are printed lane by lane, then one score line.
if lanes > 1 and not lane then
  local t_start = os.time()
  local self = script_dir() .. "/run.lua"
  local cmd, logs = {}, {}
  for k = 1, lanes do
    local dir = work .. "/lane" .. k
    logs[k] = dir .. ".log"
    local args = " --work " .. sh(dir) .. " --lane " .. k .. "/" .. lanes
    if only then
      local names = {}
      for n in pairs(only) do names[#names + 1] = n end
      table.sort(names)
      args = args .. " --only " .. sh(table.concat(names, ","))
    end
    cmd[#cmd + 1] = "(" .. sh(arg[-1] or "lua5.4") .. " " .. sh(self) .. args .. " > " .. sh(logs[k])
      .. " 2>&1; echo $? > " .. sh(logs[k] .. ".rc") .. ") &"
  end
  local made = run("mkdir -p " .. sh(work) .. " && echo 1 > " .. sh(work .. "/next"))
  if not made then die("cannot make " .. work) end
  run("cd " .. sh(root) .. " && { " .. table.concat(cmd, " ") .. " wait; }")
  local total, killed_all, worst, not_killed = 0, 0, 0, {}
  for k = 1, lanes do
    local log = read(logs[k])
    local rc = tonumber((read(logs[k] .. ".rc"):match("%d+"))) or 2
    io.write("== lane ", k, " of ", lanes, " (exit ", rc, ")\n", log)
    local kk, nn = log:match("mutation score: (%d+)/(%d+) killed")
    if not kk then rc = math.max(rc, 2) end
    total, killed_all = total + (tonumber(nn) or 0), killed_all + (tonumber(kk) or 0)
    worst = math.max(worst, rc)
    -- The progress lines (two leading spaces) of every mutant not killed.
    for line in log:gmatch("[^\n]+") do
      local result = line:match("^  %S+%s+%S+%s+(%S+)")
      if result == "SURVIVED" or result == "stale" or result == "nobuild" then
        not_killed[#not_killed + 1] = line
      end
    end
  end
  -- Repeated last, so that a log cut in the middle still names them.
  if #not_killed > 0 then
    print("not killed:")
    for _, line in ipairs(not_killed) do print(line) end
  end
  print(string.format("mutation score: %d/%d killed, %d survived or stale, in %d s (%d lanes)",
    killed_all, total, total - killed_all, os.time() - t_start, lanes))
  os.exit(worst)
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
-- Built without optimization: a mutant's rebuild compiles one file, which
-- -O0 does several times faster than -O2, and the specs' time is the
-- database's, not the engine's code.  With Ninja when it is installed
-- (scripts/setup): its check of what is out of date costs a fraction of
-- make's, which a rebuild per mutant pays each time.
local ninja = run("command -v ninja")
ok, out = run("cmake -S " .. sh(tree) .. " -B " .. sh(build) .. (ninja and " -G Ninja" or "")
  .. " -DCMAKE_BUILD_TYPE=RelWithDebInfo"
  .. " '-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O0 -DNDEBUG'"
  .. " -DLEASE_BUILD_TESTS=ON -DLEASE_WERROR=ON -DLEASE_INSTALL=OFF")
if not ok then die("configuring the scratch tree failed:\n" .. out) end

-- The first build makes every target; a mutant's rebuild only what the
-- specs run (the module, the host), the power-loss test when a mutant's
-- hint runs it, and the C test programs (build_c_tests) only when they are
-- run: for a mutant's c_hint, or once its specs all passed.
local judged_targets, c_targets = nil, nil
local function build_tree(extra)
  return run("cmake --build " .. sh(build) .. " -j2" .. (judged_targets or "") .. (extra or ""))
end
local function build_c_tests()
  return run("cmake --build " .. sh(build) .. " -j2" .. c_targets)
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
-- on PostgreSQL when backend is "pg"; only the test whose full name is
-- `test` when it is given.  Returns passed, a description of the first
-- failure.
local function run_specs(files, backend, test)
  local cmd = env .. (backend == "pg" and pg_env() or "") .. "timeout -k 30 900 lua5.4 " .. sh(busted)
    .. " --no-keep-going -o plainTerminal" .. (backend == "pg" and " --exclude-tags=sqlite,not_on_pg" or "")
  if test then cmd = cmd .. " " .. sh("--filter=^" .. test:gsub("[%^%$%(%)%%%.%[%]%*%+%-%?]", "%%%0") .. "$") end
  if files then cmd = cmd .. " " .. files end
  local passed, output = run(cmd)
  if passed then return true end
  local kind, file, line, name = output:match("\n(%a+) %-> ([^\n]-) @ (%d+)\n([^\n]*)")
  if kind then return false, string.format("%s:%s %s", file, line, name) end
  return false, (output:match("[^\n]*[Ee]rror[^\n]*") or "busted failed"):sub(1, 120)
end

-- The C test programs a mutant is judged by, and those of a tree built
-- with libpq (test_pg_conn on the run's cluster).
local C_TESTS = { "test_core", "test_many", "test_queue", "test_threads", "test_rules", "test_cron",
  "test_plans" }
local C_TESTS_PG = { "test_pg_wire", "test_pg_conn" }

-- Run the C test programs named (all of them when nil; those of
-- C_TESTS_PG only in a tree built with libpq).  Returns passed, the first
-- failure.
local function run_c_tests(names)
  local all = { table.unpack(C_TESTS) }
  for _, t in ipairs(names and {} or C_TESTS_PG) do
    if io.open(build .. "/" .. t, "rb") then all[#all + 1] = t end
  end
  for _, t in ipairs(names or all) do
    local passed, output = run(env .. (t == "test_pg_conn" and pg_env() or "") .. "timeout -k 30 300 "
      .. sh(build .. "/" .. t))
    if not passed then
      return false, "specs/c/" .. t .. ".c " .. (output:match("%[  FAILED  %] ([%w_]+)") or "failed")
    end
  end
  return true
end

io.write("mutation: baseline build and suite in ", tree, "\n")
ok, out = build_tree()
if not ok then die("the unmutated scratch tree does not build:\n" .. out) end
judged_targets = " --target lease_lua lease_host"
-- (test_powerloss: the hint specs/faults/powerloss.lua runs it)
local powerloss = io.open(build .. "/test_powerloss", "rb") and " test_powerloss" or ""
c_targets = " --target " .. table.concat(C_TESTS, " ")
for _, t in ipairs(C_TESTS_PG) do
  if io.open(build .. "/" .. t, "rb") then c_targets = c_targets .. " " .. t end
end
if not lane or lane.k == 1 then
  local passed, why = run_specs(nil)
  if passed then passed, why = run_c_tests() end
  if not passed then die("the unmutated suite fails, so no mutant can be judged: " .. tostring(why)) end
end

-- The mutants ----------------------------------------------------------------
local results, killed, bad = {}, 0, 0
for m in next_mutant do
  local path = tree .. "/" .. m.file
  local original = read(root .. "/" .. m.file)
  -- one edit (from/to) or several (edits = {{from=, to=}, ...}), applied in
  -- order, each of whose text must occur exactly once when it is applied
  local edits = m.edits or { { from = m.from, to = m.to } }
  local mutated, stale = original, nil
  for k, ed in ipairs(edits) do
    local at
    at, stale = locate(mutated, m.file, ed.fn or m.fn, ed.from, k)
    if stale then break end
    mutated = mutated:sub(1, at - 1) .. ed.to .. mutated:sub(at + #ed.from)
  end
  local r = { m = m }
  if stale then
    r.result, r.by = "stale", stale
  else
    write(path, mutated)
    local built, bout = build_tree(m.hint == "specs/faults/powerloss.lua" and powerloss or nil)
    if not built then
      r.result, r.by = "nobuild", (bout:match("[^\n]*error:[^\n]*") or "build failed"):sub(1, 120)
    else
      local p1, w1, c_built = true, nil, true
      -- c_hint: a C test program to run first (the spec hint's counterpart)
      if m.c_hint then
        c_built, bout = build_c_tests()
        if c_built then p1, w1 = run_c_tests({ m.c_hint }) end
      end
      local k = kills[m.name]
      if c_built and p1 and k then p1, w1 = run_specs(k.file, m.backend, k.test) end
      if c_built and p1 and m.hint then p1, w1 = run_specs(m.hint, m.backend) end
      if c_built and p1 then p1, w1 = run_specs(nil, m.backend) end
      if c_built and p1 and not m.c_hint then
        c_built, bout = build_c_tests()
        if c_built then p1, w1 = run_c_tests() end
      elseif c_built and p1 then
        p1, w1 = run_c_tests()
      end
      if not c_built then
        r.result, r.by = "nobuild", (bout:match("[^\n]*error:[^\n]*") or "C tests do not build"):sub(1, 120)
      elseif p1 then r.result, r.by = "SURVIVED", "no spec failed"
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
