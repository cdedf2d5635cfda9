-- specs/faults/powerloss.lua: a short run of the simulated power-loss test
-- (specs/faults/powerloss.c, built as test_powerloss), so that the mutation
-- check can run it for the mutants that break its shim or its settings.
-- Outside the default suite (its name does not end in _spec): ctest runs
-- the full-size test as faults_powerloss.  By hand, after a build:
--   lua5.4 $(command -v busted) specs/faults/powerloss.lua
local build = os.getenv("LEASE_BUILD_DIR") or "build"
local tmp = os.getenv("LEASE_TEST_TMP") or "/tmp"

local function sh(s) return "'" .. tostring(s):gsub("'", [['\'']]) .. "'" end

describe("simulated power loss", function()
  it("loses no acknowledged operation at FULL, and catches a lying sync and NORMAL", function()
    os.execute("mkdir -p " .. sh(tmp))
    local p = assert(io.popen(sh(build .. "/test_powerloss") .. " --losses 150 --ops 40"
      .. " --dir " .. sh(tmp) .. " 2>&1"))
    local out = p:read("a")
    local ok = p:close()
    assert.is_true(ok, out)
    assert.matches("powerloss full: 150 losses .* violations 0,", out)
    assert.matches("powerloss normal: 150 losses .* violations 0,", out)
    assert.matches("powerloss lying: 50 losses .* violations [1-9]", out)
    assert.matches("powerloss normal%-as%-full: 50 losses .* violations [1-9]", out)
    assert.matches("powerloss: ok", out)
  end)
end)
