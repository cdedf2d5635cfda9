-- specs/70-docs_spec.lua: the README and the guides in docs/.
--
-- Every relative link of README.md and docs/*.md names a file of the
-- repository, and an anchor names a heading of that file; the README names
-- both tiers' test commands (.ci/run runs scripts/test --all) and stays short; and
-- the README's tour runs as printed: its shell commands and worker.lua
-- through the host program, its Lua example with the output its comments
-- give.
local H = require("helpers")

local src = os.getenv("LEASE_SOURCE_DIR")
if not src or src == "" then src = "." end

local function host_exe()
  local exe = os.getenv("LEASE_HOST")
  if not exe or exe == "" then exe = (os.getenv("LEASE_BUILD_DIR") or "build") .. "/lease" end
  if exe:sub(1, 1) ~= "/" then exe = (os.getenv("PWD") or ".") .. "/" .. exe end
  return exe
end

-- The Markdown files the links are checked in, relative to src.
local function markdown_files()
  local out = { "README.md" }
  local list = H.capture("cd " .. H.sh(src) .. " && ls docs/*.md")
  for name in list:gmatch("[^\n]+") do out[#out + 1] = name end
  return out
end

-- The text of a Markdown file without its fenced code blocks.
local function prose(text)
  local out, fenced = {}, false
  for line in (text .. "\n"):gmatch("([^\n]*)\n") do
    if line:match("^%s*```") then
      fenced = not fenced
    elseif not fenced then
      out[#out + 1] = line
    end
  end
  return table.concat(out, "\n")
end

-- The anchors GitHub gives the headings of a Markdown text: lower case,
-- punctuation dropped, spaces made hyphens, a repeated one numbered.
local function anchors(text)
  local seen, out = {}, {}
  for line in (prose(text) .. "\n"):gmatch("([^\n]*)\n") do
    local title = line:match("^#+%s+(.-)%s*$")
    if title then
      local slug = title:lower():gsub("[^%w%s_%-]", ""):gsub("%s", "-")
      local n = seen[slug]
      seen[slug] = (n or 0) + 1
      out[n and (slug .. "-" .. n) or slug] = true
    end
  end
  return out
end

local function dirname(path)
  return path:match("^(.*)/[^/]*$") or "."
end

-- path with "." and "x/.." steps removed.
local function normalize(path)
  local parts = {}
  for part in path:gmatch("[^/]+") do
    if part == ".." and #parts > 0 and parts[#parts] ~= ".." then
      parts[#parts] = nil
    elseif part ~= "." then
      parts[#parts + 1] = part
    end
  end
  return table.concat(parts, "/")
end

describe("docs #sqlite", function()
  it("every relative link of README.md and docs/*.md resolves, anchors included", function()
    local bad, checked = {}, 0
    for _, file in ipairs(markdown_files()) do
      local text = assert(H.read(src .. "/" .. file), file)
      for target in prose(text):gmatch("%]%(([^)%s]+)%)") do
        if not target:match("^%a[%w+.-]*:") then
          checked = checked + 1
          local path, anchor = target:match("^([^#]*)#?(.*)$")
          local rel = path == "" and file or normalize(dirname(file) .. "/" .. path)
          local _, exists = H.capture("test -e " .. H.sh(src .. "/" .. rel))
          if not exists then
            bad[#bad + 1] = file .. ": " .. target .. " (no " .. rel .. ")"
          elseif anchor ~= "" then
            local body = rel:match("%.md$") and H.read(src .. "/" .. rel)
            if not body or not anchors(body)[anchor] then
              bad[#bad + 1] = file .. ": " .. target .. " (no heading #" .. anchor .. " in " .. rel .. ")"
            end
          end
        end
      end
    end
    assert.are.same({}, bad)
    assert.is_true(checked > 50, "only " .. checked .. " links found")
  end)

  it("the README names both tiers' test commands, .ci/run runs the full one, and the README stays under 400 lines", function()
    local readme = assert(H.read(src .. "/README.md"))
    assert.truthy(readme:find("\n    scripts/test\n", 1, true), "README: no line `    scripts/test`")
    assert.truthy(readme:find("\n    scripts/test --all\n", 1, true), "README: no line `    scripts/test --all`")
    assert.truthy(assert(H.read(src .. "/.ci/run")):find("exec scripts/test --all\n", 1, true))
    local _, executable = H.capture("test -x " .. H.sh(src .. "/scripts/test"))
    assert.is_true(executable)
    local lines = select(2, readme:gsub("\n", "\n"))
    assert.is_true(lines <= 400, "README.md has " .. lines .. " lines")
  end)

  it("the README's tour runs as printed #lua54", function()
    local readme = assert(H.read(src .. "/README.md"))
    local worker, example
    for block in readme:gmatch("```lua\n(.-)```") do
      if block:match("^%-%- worker%.lua\n") then worker = block end
      if block:find('require("lease")', 1, true) and block:find("invoice-42", 1, true) then example = block end
    end
    assert.truthy(worker, "README: no ```lua block starting with -- worker.lua")
    assert.truthy(example, "README: no Lua example with invoice-42")
    local dir = H.dir()
    H.write(dir .. "/worker.lua", worker)
    H.write(dir .. "/fence.lua", example)

    -- the shell commands of the tour, in order: "    lease ..." or "    $ lease ..."
    local commands = {}
    for line in readme:gmatch("[^\n]+") do
      local cmd = line:match("^    %$? ?lease (.-)%s*$")
      if cmd then commands[#commands + 1] = (cmd:gsub("%s+#.*$", "")) end
    end
    assert.is_true(#commands >= 6, "README: only " .. #commands .. " lease commands")
    local exe = host_exe()
    local jobs_out
    for _, cmd in ipairs(commands) do
      local out, _, code = H.capture("cd " .. H.sh(dir) .. " && " .. H.sh(exe) .. " " .. cmd .. " 2>&1")
      -- the pool exits 1 because the tour discards a job on purpose
      local want = cmd:match("^pool ") and 1 or 0
      assert.are.equal(want, code, "lease " .. cmd .. ":\n" .. out)
      if cmd == "jobs jobs.db" and not jobs_out then jobs_out = out end
    end

    -- the table the README shows is what `lease jobs` printed, owners aside
    local shown = readme:match("    %$ lease jobs jobs%.db\n(.-)\n\n")
    assert.truthy(shown and jobs_out)
    local function rows(text)
      local out = {}
      for line in text:gmatch("[^\n]+") do
        out[#out + 1] = (line:gsub("^    ", ""):gsub("%S+:%d+:%d+", "OWNER"):gsub("%s+", " "))
      end
      return out
    end
    assert.are.same(rows(shown), rows(jobs_out))

    local db = H.lease.open(dir .. "/jobs.db")
    assert.are.equal("hello, Ann", db:state("greet-ann").result)
    assert.are.equal("hello, Bob", db:state("greet-bob").result)
    local nobody = db:state("greet-nobody")
    assert.are.equal("available", nobody.status)      -- the tour's last command retried it
    assert.are.equal("no name to greet", nobody.errors[1].message:match("no name to greet"))
    db:close()

    -- the Lua example prints what its comments say
    local out, ok = H.capture("cd " .. H.sh(dir) .. " && rm -f jobs.db jobs.db-wal jobs.db-shm && "
      .. H.sh(exe) .. " fence.lua 2>&1")
    assert.is_true(ok, out)
    assert.are.equal("A got fence\t1\nB got fence\t2\nfalse\tnot_owner\ntrue\ntotal=17.50\n", out)
    assert.truthy(example:find("--> false  not_owner", 1, true))
    assert.truthy(example:find("--> total=17.50", 1, true))
  end)
end)

describe("the manual page and the usage", function()
  -- lease.1 with its roff minus signs as plain hyphens
  local function manual()
    return (H.read(src .. "/docs/lease.1"):gsub("\\%-", "-"))
  end

  it("lease.1's SYNOPSIS and COMMANDS headings name every option of every command's usage", function()
    local man = manual()
    local syn = man:match("%.SH SYNOPSIS\n(.-)%.SH ")
    local cmds = man:match("%.SH COMMANDS\n(.-)%.SH ")
    assert.truthy(syn and cmds)
    local usage, n = require("lease.cli").usage("lease"), 0
    for name, args in usage:gmatch("\n  lease (%S+) ([^\n]-)   [^\n]*") do
      n = n + 1
      local quoted = name:gsub("%-", "%%-")
      local block = syn:match("%.B lease " .. quoted .. "\n(.-)%.br") or syn:match("%.B lease " .. quoted .. "\n(.*)$")
      local head = cmds:match('\n%.BI "' .. quoted .. ' ([^\n]*)')
      assert.truthy(block, "no SYNOPSIS line for " .. name)
      assert.truthy(head, "no COMMANDS heading for " .. name)
      for flag in args:gmatch("%-%-?%w[%w-]*") do
        assert.truthy(block:find(flag, 1, true), "SYNOPSIS of " .. name .. " lacks " .. flag)
        assert.truthy(head:find(flag, 1, true), "COMMANDS heading of " .. name .. " lacks " .. flag)
      end
    end
    assert.is_true(n >= 20, usage)
  end)

  it("lease --help, lease.1 and cli.md name the modules the program preloads, and no other", function()
    local out, ok = H.capture(H.sh(host_exe()) .. " -e "
      .. H.sh("for k in pairs(package.preload) do print(k) end"))
    assert.is_true(ok, out)
    local preloaded = {}
    -- LuaJIT preloads its own modules (table.new, ...): the program's are lease's
    for m in out:gmatch("[^\n]+") do
      if m == "lease" or m:find("^lease%.") then preloaded[m] = true end
    end
    assert.is_true(preloaded["lease"] and preloaded["lease.cli"], out)
    local help = H.capture(H.sh(host_exe()) .. " --help")
    local sentence = help:match("The modules (.-%.)\n")
    assert.truthy(sentence, help)
    local man = manual():match("The modules\n(.-)%.\n%.PP")
    assert.truthy(man)
    local md = H.read(src .. "/docs/cli.md"):match("with (`lease`.-) built in")
    assert.truthy(md)
    for m in pairs(preloaded) do
      local plain = m:gsub("%.", "%%.")
      assert.truthy(sentence:find("%f[%w.]" .. plain .. "%f[^%w.]"), "--help lacks " .. m)
      assert.truthy(man:find("%.BR? " .. plain .. " ?,?\n"), "lease.1 lacks " .. m)
      assert.truthy(H.read(src .. "/docs/cli.md"):find("`" .. m .. "`", 1, true), "cli.md lacks " .. m)
    end
    for _, text in ipairs({ sentence, man, md }) do
      for m in text:gmatch("lease[%w.]*%w") do
        assert.truthy(preloaded[m] or m == "lease.httpd", m .. " is named but not preloaded")
      end
    end
  end)
end)
