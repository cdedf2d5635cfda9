-- specs/fuzz/replay.lua: fuzz_ops's seed corpus, run once in a clang tree
-- (scripts/fuzz fuzz_ops --seeds-only): every seed must agree with the
-- harness's model of the contract, and the deliberately wrong model must
-- not.  Not a *_spec.lua file, so the default suite leaves it out (it needs
-- clang and a build of its own); the mutation check names it as the hint of
-- the mutants that the fuzzing harness is there to catch, and ctest's
-- fuzz_ops runs the same and more.
local function sh(s) return "'" .. tostring(s):gsub("'", [['\'']]) .. "'" end

describe("fuzz_ops seed corpus", function()
  it("agrees with the model of the contract on every seed", function()
    local src = os.getenv("LEASE_SOURCE_DIR") or "."
    local build = os.getenv("LEASE_BUILD_DIR") or "build"
    local cmd = sh(src .. "/scripts/fuzz") .. " fuzz_ops --seeds-only --dir " .. sh(build .. "/fuzz")
    local p = assert(io.popen(cmd .. " 2>&1"))
    local out = p:read("a")
    local ok = p:close()
    assert.is_true(ok == true, out)
  end)
end)
