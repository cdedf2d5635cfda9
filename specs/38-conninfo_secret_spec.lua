-- A password in a PostgreSQL connection string never shows: not in an
-- error, a handle's name, the CLI's output, the pool's progress line or its
-- summary.  The server is named by host (or socket), port, database and
-- user instead.  The first block needs no server (on both runs); the rest
-- connects, on the PostgreSQL run ($LEASE_TEST_PG).
local H = require("helpers")
local lease = H.lease
local pool = require("lease.pool")

local SECRET = "Tr0ub4dor&3x"         -- as libpq reads it
local SECRET_URI = "Tr0ub4dor%263x"   -- percent-encoded in a URI
local SSL_SECRET = "k3yPhr4se"

-- Fail naming text when it holds any form of the secrets.
local function no_secret(text)
  for _, s in ipairs({ SECRET, SECRET_URI, SSL_SECRET, "Tr0ub4dor" }) do
    assert.is_nil(text:find(s, 1, true), "secret shown in: " .. text)
  end
end

-- Run cli.main(argv); returns status, stdout text, stderr text.
local run_cli = H.cli

describe("a password in a connection string", function()
  it("is in no error when the server cannot be reached (URI, percent-encoded, keyword form)", function()
    local dir = H.dir()
    local strings = {
      "postgresql://alice:" .. SECRET_URI .. "@/jobsdb?host=" .. dir .. "&port=5999",
      "postgres://alice:" .. SECRET .. "@/jobsdb?host=" .. dir .. "&port=5999",
      "postgresql://alice@/jobsdb?host=" .. dir .. "&port=5999&password=" .. SECRET_URI
        .. "&sslpassword=" .. SSL_SECRET,
      "host=" .. dir .. " port=5999 dbname=jobsdb user=alice password=" .. SECRET,
      "host=" .. dir .. " port=5999 dbname=jobsdb user=alice password='" .. SECRET
        .. "' sslpassword=" .. SSL_SECRET .. " passfile=/secret/Tr0ub4dor",
    }
    for _, ci in ipairs(strings) do
      local err = H.error_of(lease.open, ci)
      no_secret(err)
      assert.truthy(err:find("[cantopen]", 1, true), err)
      if not err:find("not built", 1, true) then
        for _, part in ipairs({ "host=" .. dir, "port=5999", "dbname=jobsdb", "user=alice" }) do
          assert.truthy(err:find(part, 1, true), part .. " missing in " .. err)
        end
      end
      local status, out, e = run_cli({ "jobs", ci })
      assert.are.equal(1, status)
      assert.are.equal("", out)
      no_secret(e)
    end
  end)

  it("is in no error when libpq cannot parse the string", function()
    for _, ci in ipairs({
      "postgresql://alice:" .. SECRET .. "@[::1/jobsdb",
      "postgresql://alice:" .. SECRET_URI .. "@/jobsdb?connect_timeout=%zz",
      "postgresql://alice@/jobsdb?password=" .. SECRET_URI .. "&x=%zz",
      "host=/nowhere password=" .. SECRET .. " dbname",
      "host=/nowhere password=" .. SECRET:gsub("&", " &"),   -- a space, no quotes
    }) do
      local err = H.error_of(lease.open, ci)
      no_secret(err)
      assert.is_nil(err:find("&3x", 1, true), err)
      assert.truthy(err:find("[cantopen]", 1, true), err)
    end
  end)

  it("is in no error of the path functions", function()
    local err = H.error_of(lease.state, "host=/nowhere port=5999 password=" .. SECRET, "a")
    no_secret(err)
    assert.truthy(err:find("host=/nowhere port=5999", 1, true), err)
  end)
end)

if H.backend ~= "pg" then return end

-- path (H.path: keyword form with its own schema) with a password added in
-- form "kv" or "uri" (percent-encoded).  The test server trusts every
-- connection, so the password is sent and never checked.
local function with_password(path, form)
  if form == "kv" then return path .. " password='" .. SECRET .. "'" end
  local host = assert(path:match("host=(%S+)"))
  local db = assert(path:match("dbname=(%S+)"))
  local schema = assert(path:match("search_path=([%w_]+)"))
  return "postgresql://lease:" .. SECRET_URI .. "@/" .. db .. "?host=" .. host
    .. "&options=-csearch_path%3D" .. schema
end

describe("a password in a connection string, connected", function()
  for _, form in ipairs({ "kv", "uri" }) do
    it("is not in the handle's name, its errors or the CLI's output (" .. form .. ")", function()
      local ci = with_password(H.path("secret"), form)
      local host = H.pg_conninfo:match("host=(%S+)")
      -- read-only on a schema without a jobs table: a schema error naming the server
      local err = H.error_of(lease.open, ci, { readonly = true })
      no_secret(err)
      assert.truthy(err:find("[schema]", 1, true), err)
      local db = lease.open(ci)
      for _, text in ipairs({ db:name(), tostring(db) }) do
        no_secret(text)
        for _, part in ipairs({ "host=" .. host, "dbname=postgres", "user=lease" }) do
          assert.truthy(text:find(part, 1, true), part .. " missing in " .. text)
        end
      end
      assert.is_true(db:enqueue("a"))
      db:close()
      local status, out, e = run_cli({ "show", ci, "nope" })
      assert.are.equal(1, status)
      assert.are.equal("", out)
      no_secret(e)
      assert.truthy(e:find("host=" .. host, 1, true), e)
      status, out, e = run_cli({ "enqueue", ci, "a" })
      assert.are.equal(1, status)
      no_secret(out .. e)
      assert.truthy(e:find("user=lease", 1, true), e)
    end)
  end

  it("is scrubbed, decoded, from the server's own messages", function()
    -- the server echoes a bad setting's value: here the password, decoded
    local host = H.pg_conninfo:match("host=(%S+)")
    for _, ci in ipairs({
      "postgresql://lease:" .. SECRET_URI .. "@/postgres?host=" .. host
        .. "&options=-cstatement_timeout%3D" .. SECRET_URI,
      "host=" .. host .. " dbname=postgres user=lease password='" .. SECRET
        .. "\\'x' options='-cstatement_timeout=" .. SECRET .. "\\'x'",
    }) do
      local err = H.error_of(lease.open, ci)
      no_secret(err)
      assert.truthy(err:find('statement_timeout": "***"', 1, true), err)
    end
  end)

  it("is not in the pool's progress line or summary", function()
    local ci = with_password(H.path("secret_pool"), "uri")
    local db = lease.open(ci)
    db:enqueue_many({ "ok1", "ok2", { id = "bad", max_attempts = 1 } })
    db:close()
    local progress = io.tmpfile()
    local s = pool.run({
      db = ci, workers = 2, ttl = 30, progress = true, out = progress, signals = false,
      handler = function(job)
        if job.id ~= "bad" then return "done" end
        -- a database error inside the handler, on a string with a password
        require("lease").open("host=/nowhere port=5999 user=lease password=Tr0ub4dor&3x")
      end,
    })
    progress:seek("set")
    local line = progress:read("*a")
    progress:close()
    assert.are.equal(2, s.done)
    assert.are.equal(1, s.handler_errors)
    local text = pool.format(s)
    no_secret(line)
    no_secret(text)
    assert.truthy(text:find("host=/nowhere port=5999 user=lease", 1, true), text)
    local err = H.error_of(pool.run, { db = ci:gsub("/postgres%?", "/nosuchdb?"), workers = 1,
      handler = function() end, signals = false })
    no_secret(err)
    assert.truthy(err:find("dbname=nosuchdb", 1, true), err)
  end)
end)
