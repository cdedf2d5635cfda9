/*
** lease_thread.c: the lease.thread module, native threads from Lua
** (issue #3; contract step 8 is tested with it).
**
**   local thread = require "lease.thread"   -- or require("lease").thread
**   local t = thread.spawn(fn, ...)         -- fn(...) on an OS thread
**   local ok, ... = t:join()                -- pcall's shape
**   local b = thread.barrier(n)             -- b:wait() -> true for one
**   local ch = thread.channel([capacity])   -- ch:send(v), ch:recv([s]), ch:close()
**
** Each thread runs in a fresh lua_State of its own with the standard
** libraries, `lease` and `lease.thread` preloaded, and the parent's
** package.path and package.cpath.  No Lua value is shared between states:
** arguments, results and channel messages are deep copies (lease_copy.c);
** barriers and channels are reference-counted C objects that every state
** holding them keeps alive.
**
** What the others learned (STYLE.md) and this file keeps: join is shaped
** like pcall and carries the traceback; errors of a thread are never
** printed, only returned; upvalues are refused, never dropped; __close
** joins; __gc never blocks and never kills (a running thread is detached);
** the module stays loaded while detached threads may still run its code.
*/
#define _GNU_SOURCE   /* dladdr */
#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <lua.h>
#include <lauxlib.h>
#include <lualib.h>

#include "lease_lua.h"
#include "lease_thread.h"

#define THREAD_MT "lease.thread"

/* ===================================================================== */
/* Shareable objects (lease_thread.h)                                     */
/* ===================================================================== */

/* What a barrier or channel userdata holds: one reference to the object. */
typedef struct shared_ud {
  lshared *o;   /* NULL only while being made */
} shared_ud;

static const char *const shared_mt[LSHARED_KINDS] = {BARRIER_MT, CHANNEL_MT};

static void ensure_metatables(lua_State *L);

/* See lease_thread.h. */
void lshared_ref(lshared *o) {
  atomic_fetch_add_explicit(&o->refs, 1, memory_order_relaxed);
}

/* See lease_thread.h.  acq_rel: the thread that destroys must see every
** write the others made before dropping their references. */
void lshared_unref(lshared *o) {
  if (atomic_fetch_sub_explicit(&o->refs, 1, memory_order_acq_rel) == 1) o->destroy(o);
}

/* See lease_thread.h. */
lshared *lshared_test(lua_State *L, int i) {
  int k;
  for (k = 0; k < LSHARED_KINDS; k++) {
    shared_ud *u = luaL_testudata(L, i, shared_mt[k]);
    if (u) return u->o;
  }
  return NULL;
}

/* See lease_thread.h. */
void lshared_push(lua_State *L, lshared *o) {
  shared_ud *u;
  ensure_metatables(L);
  u = lua_newuserdatauv(L, sizeof *u, 0);
  u->o = NULL;   /* owns nothing until the metatable (and so __gc) is set */
  luaL_setmetatable(L, shared_mt[o->kind]);
  lshared_ref(o);
  u->o = o;
}

/* The object of kind `kind` at i, or raise "lease.barrier expected, got ...". */
static lshared *check_shared(lua_State *L, int i, int kind) {
  shared_ud *u = luaL_checkudata(L, i, shared_mt[kind]);
  if (!u->o) luaL_error(L, "attempt to use an unfinished %s", shared_mt[kind]);
  return u->o;
}

/* __gc of barriers and channels: drop this state's reference. */
static int shared_gc(lua_State *L) {
  shared_ud *u = lua_touserdata(L, 1);
  if (u && u->o) {
    lshared_unref(u->o);
    u->o = NULL;
  }
  return 0;
}

/* Fill *ts with the CLOCK_MONOTONIC time `seconds` from now. */
static void deadline_after(struct timespec *ts, double seconds) {
  double whole = floor(seconds);
  clock_gettime(CLOCK_MONOTONIC, ts);
  ts->tv_sec += (time_t)whole;
  ts->tv_nsec += (long)((seconds - whole) * 1e9);
  if (ts->tv_nsec >= 1000000000L) {
    ts->tv_sec++;
    ts->tv_nsec -= 1000000000L;
  }
}

/* Initialise a condition variable that times out on CLOCK_MONOTONIC, so a
** change of the wall clock does not stretch or cut a timeout. */
static int cond_init_monotonic(pthread_cond_t *cv) {
  pthread_condattr_t attr;
  int rc = pthread_condattr_init(&attr);
  if (rc == 0) rc = pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
  if (rc == 0) rc = pthread_cond_init(cv, &attr);
  pthread_condattr_destroy(&attr);
  return rc;
}

/* ===================================================================== */
/* Barriers                                                               */
/* ===================================================================== */

typedef struct lbarrier {
  lshared base;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  lua_Integer n;          /* how many threads make a round */
  lua_Integer arrived;    /* in the current round */
  uint64_t round;         /* grows when a round completes; waiters wait for it */
} lbarrier;

/* lshared destroy of a barrier. */
static void barrier_destroy(lshared *o) {
  lbarrier *b = (lbarrier *)o;
  pthread_cond_destroy(&b->cv);
  pthread_mutex_destroy(&b->mu);
  free(b);
}

/*
** thread.barrier(n) -> lease.barrier
**   n (integer >= 1): how many threads each round waits for.
** Makes a reusable barrier (libuv's uv_barrier_t) that can be passed to
** threads as an argument or through a channel; it lives as long as any
** state holds it.  Raises a bad-argument error for a bad n, and "not
** enough memory".  Issue #3.
*/
static int thread_barrier(lua_State *L) {
  lbarrier *b;
  lua_Integer n;
  int isint = 0;
  callee c;
  callee_init(L, &c, "thread.barrier", 0);
  n = lua_type(L, 1) == LUA_TNUMBER ? lua_tointegerx(L, 1, &isint) : 0;
  if (!isint || n < 1 || n > INT32_MAX) arg_fail(L, &c, 1, "n", "an integer from 1 to 2^31-1");
  b = calloc(1, sizeof *b);
  if (!b) return luaL_error(L, "not enough memory");
  atomic_init(&b->base.refs, 0);
  b->base.kind = LSHARED_BARRIER;
  b->base.destroy = barrier_destroy;
  b->n = n;
  if (pthread_mutex_init(&b->mu, NULL) != 0) {
    free(b);
    return luaL_error(L, "not enough memory");
  }
  if (pthread_cond_init(&b->cv, NULL) != 0) {
    pthread_mutex_destroy(&b->mu);
    free(b);
    return luaL_error(L, "not enough memory");
  }
  /* lshared_push takes the first reference; if it raises, nobody holds b */
  lshared_ref(&b->base);
  lshared_push(L, &b->base);
  lshared_unref(&b->base);
  return 1;
}

/*
** b:wait() -> boolean
** Blocks until n threads (n as given to thread.barrier) have called wait
** in this round, then releases them all.  Returns true to exactly one of
** them (the last to arrive) and false to the others, as uv_barrier_wait
** does; the barrier is then ready for the next round.  Raises only for a
** value that is not a barrier.  Issue #3.
*/
static int barrier_wait(lua_State *L) {
  lbarrier *b = (lbarrier *)check_shared(L, 1, LSHARED_BARRIER);
  int serial = 0;
  uint64_t round;
  pthread_mutex_lock(&b->mu);
  round = b->round;
  if (++b->arrived == b->n) {
    b->arrived = 0;
    b->round++;
    serial = 1;
    pthread_cond_broadcast(&b->cv);
  } else {
    while (b->round == round) pthread_cond_wait(&b->cv, &b->mu);
  }
  pthread_mutex_unlock(&b->mu);
  lua_pushboolean(L, serial);
  return 1;
}

/* __tostring of a barrier: "lease.barrier: 0x... (n = 8)". */
static int barrier_tostring(lua_State *L) {
  lbarrier *b = (lbarrier *)check_shared(L, 1, LSHARED_BARRIER);
  lua_pushfstring(L, "%s: %p (n = %I)", BARRIER_MT, (void *)b, b->n);
  return 1;
}

/* ===================================================================== */
/* Channels                                                               */
/* ===================================================================== */

/* One queued message. */
typedef struct citem {
  lcopy *m;
  struct citem *next;
} citem;

typedef struct lchannel {
  lshared base;
  pthread_mutex_t mu;
  pthread_cond_t readable;   /* signalled when a message arrives or on close */
  pthread_cond_t writable;   /* signalled when room appears or on close */
  citem *head, *tail;
  size_t count;
  size_t capacity;           /* 0: unbounded */
  int closed;
} lchannel;

/* lshared destroy of a channel: free the messages nobody will receive. */
static void channel_destroy(lshared *o) {
  lchannel *ch = (lchannel *)o;
  citem *it = ch->head;
  while (it) {
    citem *next = it->next;
    lcopy_free(it->m);
    free(it);
    it = next;
  }
  pthread_cond_destroy(&ch->writable);
  pthread_cond_destroy(&ch->readable);
  pthread_mutex_destroy(&ch->mu);
  free(ch);
}

/*
** thread.channel([capacity]) -> lease.channel
**   capacity (integer >= 1, optional): how many messages it holds before
**     send blocks; nil (the default) means unbounded.
** Makes a first-in first-out queue of deep-copied values between threads;
** pass it to threads as an argument.  It lives as long as any state holds
** it.  Raises a bad-argument error for a bad capacity, and "not enough
** memory".  Issue #3.
*/
static int thread_channel(lua_State *L) {
  lchannel *ch;
  lua_Integer cap = 0;
  callee c;
  callee_init(L, &c, "thread.channel", 0);
  if (!lua_isnoneornil(L, 1)) {
    int isint = 0;
    cap = lua_type(L, 1) == LUA_TNUMBER ? lua_tointegerx(L, 1, &isint) : 0;
    if (!isint || cap < 1) arg_fail(L, &c, 1, "capacity", "an integer >= 1 or nil");
  }
  ch = calloc(1, sizeof *ch);
  if (!ch) return luaL_error(L, "not enough memory");
  atomic_init(&ch->base.refs, 0);
  ch->base.kind = LSHARED_CHANNEL;
  ch->base.destroy = channel_destroy;
  ch->capacity = (size_t)cap;
  if (pthread_mutex_init(&ch->mu, NULL) != 0) {
    free(ch);
    return luaL_error(L, "not enough memory");
  }
  if (cond_init_monotonic(&ch->readable) != 0) {
    pthread_mutex_destroy(&ch->mu);
    free(ch);
    return luaL_error(L, "not enough memory");
  }
  if (cond_init_monotonic(&ch->writable) != 0) {
    pthread_cond_destroy(&ch->readable);
    pthread_mutex_destroy(&ch->mu);
    free(ch);
    return luaL_error(L, "not enough memory");
  }
  lshared_ref(&ch->base);
  lshared_push(L, &ch->base);
  lshared_unref(&ch->base);
  return 1;
}

/*
** ch:send(value) -> true | false, "closed"
**   value: anything thread.spawn can copy, except nil (so that recv's nil
**     always comes with a reason).
** Copies value deep (as spawn copies arguments) and queues it; blocks
** while the channel holds `capacity` messages.  Returns false, "closed"
** when the channel is closed, also when it is closed while send waits.
** Raises a bad-argument error for nil or a value that cannot be copied
** (naming its type and its path, e.g. "cannot copy a coroutine at t.a[3]"),
** and "not enough memory".  Issue #3.
*/
static int channel_send(lua_State *L) {
  lchannel *ch = (lchannel *)check_shared(L, 1, LSHARED_CHANNEL);
  citem *it;
  lcopy *m;
  callee c;
  int bad;
  callee_init(L, &c, "send", 1);
  if (lua_isnoneornil(L, 2))
    arg_error(L, &c, 2, "value must not be nil (recv returns nil only with a reason)");
  lua_settop(L, 2);
  m = lcopy_encode(L, 2, 2, &bad);
  if (!m) return arg_error(L, &c, 2, lua_tostring(L, -1));
  it = malloc(sizeof *it);
  if (!it) {
    lcopy_free(m);
    return luaL_error(L, "not enough memory");
  }
  it->m = m;
  it->next = NULL;
  pthread_mutex_lock(&ch->mu);
  while (!ch->closed && ch->capacity && ch->count >= ch->capacity)
    pthread_cond_wait(&ch->writable, &ch->mu);
  if (ch->closed) {
    pthread_mutex_unlock(&ch->mu);
    lcopy_free(m);
    free(it);
    lua_pushboolean(L, 0);
    lua_pushliteral(L, "closed");
    return 2;
  }
  if (ch->tail) ch->tail->next = it;
  else ch->head = it;
  ch->tail = it;
  ch->count++;
  pthread_cond_signal(&ch->readable);
  pthread_mutex_unlock(&ch->mu);
  lua_pushboolean(L, 1);
  return 1;
}

/*
** ch:recv([timeout]) -> value | nil, "timeout" | nil, "closed"
**   timeout (number of seconds >= 0, optional): how long to wait for a
**     message; nil (the default) waits as long as it takes, 0 only looks.
** Returns the oldest message (a fresh copy in this state).  Messages sent
** before close are still received; after them, a closed channel gives
** nil, "closed".  nil, "timeout" when the time ran out first.  Raises a
** bad-argument error for a bad timeout, and "not enough memory".
** Issue #3.
*/
static int channel_recv(lua_State *L) {
  lchannel *ch = (lchannel *)check_shared(L, 1, LSHARED_CHANNEL);
  double timeout = -1;   /* < 0: no limit */
  struct timespec until;
  citem *it = NULL;
  lcopy **slot;
  callee c;
  int closed;
  callee_init(L, &c, "recv", 1);
  if (!lua_isnoneornil(L, 2)) {
    timeout = lua_type(L, 2) == LUA_TNUMBER ? lua_tonumber(L, 2) : -1;
    if (!(timeout >= 0) || isinf(timeout))
      arg_fail(L, &c, 2, "timeout", "a finite number of seconds >= 0 or nil");
    if (timeout > 1e9) timeout = -1;   /* beyond 30 years: no limit */
  }
  slot = lcopy_newbox(L);   /* made before taking a message: cannot fail after */
  if (timeout >= 0) deadline_after(&until, timeout);
  pthread_mutex_lock(&ch->mu);
  while (!ch->head && !ch->closed) {
    if (timeout < 0) pthread_cond_wait(&ch->readable, &ch->mu);
    else if (pthread_cond_timedwait(&ch->readable, &ch->mu, &until) == ETIMEDOUT) break;
  }
  if (ch->head) {
    it = ch->head;
    ch->head = it->next;
    if (!ch->head) ch->tail = NULL;
    ch->count--;
    pthread_cond_signal(&ch->writable);
  }
  closed = ch->closed;
  pthread_mutex_unlock(&ch->mu);
  if (!it) {
    lua_pushnil(L);
    lua_pushstring(L, closed ? "closed" : "timeout");
    return 2;
  }
  *slot = it->m;
  free(it);
  lcopy_decode(L, *slot);
  lcopy_free(*slot);
  *slot = NULL;
  return 1;
}

/*
** ch:close() -> true
** Closes the channel for every state that holds it: blocked senders and
** receivers wake up; send then returns false, "closed"; recv returns the
** messages still queued, then nil, "closed".  Closing again does nothing.
** Raises only for a value that is not a channel.  Issue #3.
*/
static int channel_close(lua_State *L) {
  lchannel *ch = (lchannel *)check_shared(L, 1, LSHARED_CHANNEL);
  pthread_mutex_lock(&ch->mu);
  ch->closed = 1;
  pthread_cond_broadcast(&ch->readable);
  pthread_cond_broadcast(&ch->writable);
  pthread_mutex_unlock(&ch->mu);
  lua_pushboolean(L, 1);
  return 1;
}

/* __tostring of a channel: "lease.channel: 0x... (2 queued, capacity 8)". */
static int channel_tostring(lua_State *L) {
  lchannel *ch = (lchannel *)check_shared(L, 1, LSHARED_CHANNEL);
  size_t count;
  int closed;
  pthread_mutex_lock(&ch->mu);
  count = ch->count;
  closed = ch->closed;
  pthread_mutex_unlock(&ch->mu);
  if (ch->capacity)
    lua_pushfstring(L, "%s: %p (%I queued, capacity %I%s)", CHANNEL_MT, (void *)ch,
                    (lua_Integer)count, (lua_Integer)ch->capacity, closed ? ", closed" : "");
  else
    lua_pushfstring(L, "%s: %p (%I queued, unbounded%s)", CHANNEL_MT, (void *)ch,
                    (lua_Integer)count, closed ? ", closed" : "");
  return 1;
}

/* ===================================================================== */
/* Threads                                                                */
/* ===================================================================== */

/*
** One spawned thread.  Two references: the Lua handle and the running
** thread; whichever lets go last frees it, so a handle collected while the
** thread runs (detached) leaves the thread everything it needs.
*/
typedef struct lthread {
  atomic_int refs;
  atomic_int finished;   /* 1 once the thread's state is closed */
  pthread_t tid;
  lcopy *input;          /* fn and its arguments; the thread frees it */
  char *path, *cpath;    /* the parent's package.path and package.cpath, or NULL */
  /* The outcome, written by the thread before it ends, read after pthread_join. */
  int ok;                /* 1: results holds fn's results; 0: err holds the message */
  lcopy *results;
  char *err;
  size_t errlen;
} lthread;

/* The Lua handle of a thread. */
typedef struct thandle {
  lthread *t;            /* NULL once collected, or when spawn failed half-way */
  int joined;            /* 1 after join or __close */
} thandle;

/* Free a thread's record and everything it still owns. */
static void lthread_free(lthread *t) {
  lcopy_free(t->input);
  lcopy_free(t->results);
  free(t->path);
  free(t->cpath);
  free(t->err);
  free(t);
}

/* Drop one reference to t; the last one frees it. */
static void lthread_unref(lthread *t) {
  if (atomic_fetch_sub_explicit(&t->refs, 1, memory_order_acq_rel) == 1) lthread_free(t);
}

/* Keep a copy of the string at i of L as the thread's error message. */
static void save_error(lthread *t, lua_State *L, int i) {
  size_t len = 0;
  const char *msg = lua_tolstring(L, i, &len);
  if (!msg) msg = "(error object is not a string)", len = strlen(msg);
  free(t->err);
  t->err = malloc(len + 1);
  t->errlen = t->err ? len : 0;
  if (t->err) {
    memcpy(t->err, msg, len);
    t->err[len] = '\0';
  }
  t->ok = 0;
}


/*
** The body of a thread's state, run protected: open the libraries, preload
** lease, set the parent's paths, copy fn and its arguments in, call fn
** with a traceback handler, and copy its results out (or its error).
** Errors raised here (memory) are caught by thread_main.
*/
static int child_pmain(lua_State *L) {
  lthread *t = lua_touserdata(L, 1);
  int base, n, bad;
  luaL_openlibs(L);
  lease_lua_preload_all(L);   /* lease, lease.thread, lease.pool, lease.cli */
  if (lua_getglobal(L, "package") == LUA_TTABLE) {
    if (t->path) {
      lua_pushstring(L, t->path);
      lua_setfield(L, -2, "path");
    }
    if (t->cpath) {
      lua_pushstring(L, t->cpath);
      lua_setfield(L, -2, "cpath");
    }
  }
  lua_pop(L, 1);
  lua_pushcfunction(L, lease_lua_traceback);
  base = lua_gettop(L);
  n = lcopy_decode(L, t->input);   /* fn, then its arguments */
  if (lua_pcall(L, n - 1, LUA_MULTRET, base) != LUA_OK) {
    save_error(t, L, -1);
    return 0;
  }
  t->results = lcopy_encode(L, base + 1, lua_gettop(L), &bad);
  if (!t->results) {
    lua_pushfstring(L, "result #%d: %s", bad, lua_tostring(L, -1));
    save_error(t, L, -1);
    return 0;
  }
  t->ok = 1;
  return 0;
}

/* The OS thread: run child_pmain in a fresh state, close the state, and
** let go of the record. */
static void *thread_main(void *arg) {
  lthread *t = arg;
  lua_State *L = luaL_newstate();
  if (L) {
    lua_pushcfunction(L, child_pmain);
    lua_pushlightuserdata(L, t);
    if (lua_pcall(L, 1, 0, 0) != LUA_OK) save_error(t, L, -1);
    lua_close(L);
  }
  lcopy_free(t->input);
  t->input = NULL;
  atomic_store(&t->finished, 1);
  lthread_unref(t);
  return NULL;
}

/*
** Pin this shared object in memory for the life of the process.  A
** detached thread may still be running code from it when the main state
** closes and Lua unloads its C libraries (dlclose); RTLD_NODELETE on the
** already loaded object makes that unload a no-op.  In a program that
** links the module statically this finds the program itself: harmless.
*/
static void pin_module_once(void) {
  Dl_info info;
  if (dladdr((void *)(uintptr_t)&thread_main, &info) && info.dli_fname)
    (void)dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
}

/* The string field `name` of the parent's package table, copied with
** malloc, or NULL when there is none. */
static char *package_field(lua_State *L, const char *name) {
  const char *s;
  char *copy = NULL;
  int base = lua_gettop(L);
  luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
  if (lua_getfield(L, -1, LUA_LOADLIBNAME) == LUA_TTABLE &&
      lua_getfield(L, -1, name) == LUA_TSTRING) {
    s = lua_tostring(L, -1);
    copy = malloc(strlen(s) + 1);
    if (copy) strcpy(copy, s);
  }
  lua_settop(L, base);
  return copy;
}

/*
** thread.spawn(fn, ...) -> lease.thread
**   fn (Lua function): its only upvalue may be _ENV, which becomes the new
**     state's global table; it moves there with lua_dump, unstripped, so
**     tracebacks keep its file and lines.
**   ...: arguments, copied deep: nil, booleans, integers and floats (kept
**     apart), strings (any bytes), tables (cycles and shared subtables kept;
**     no metatables; at most 200 levels deep), functions as fn, barriers and
**     channels (shared).
** Starts an OS thread running fn(...) in a fresh lua_State with the
** standard libraries, `lease` preloaded and this state's package.path and
** package.cpath; returns its handle.  Raises "bad argument #k to
** 'lease.thread.spawn' (...)" when fn is not a Lua function, has another
** upvalue, or argument k (or something inside it, named by its path such
** as t.a[3]) cannot be copied: coroutines, userdata (a lease.db handle
** included: open one in the thread), C functions, tables with metatables.
** Raises "lease.thread.spawn: cannot start a thread: ..." when the system
** refuses one.  Issue #3.
*/
static int thread_spawn(lua_State *L) {
  static pthread_once_t pinned = PTHREAD_ONCE_INIT;
  int top = lua_gettop(L), bad, rc;
  char *path, *cpath;
  sigset_t all, old;
  thandle *h;
  lthread *t;
  lcopy *m;
  callee c;
  callee_init(L, &c, "thread.spawn", 0);
  if (lua_type(L, 1) != LUA_TFUNCTION) arg_fail(L, &c, 1, "fn", "a function");
  if (lua_iscfunction(L, 1)) arg_error(L, &c, 1, "fn must be a Lua function, got a C function");
  /* The handle first, closed (liolib's newprefile): if anything below
  ** raises, its __gc has nothing to undo. */
  h = lua_newuserdatauv(L, sizeof *h, 0);
  h->t = NULL;
  h->joined = 0;
  luaL_setmetatable(L, THREAD_MT);
  m = lcopy_encode(L, 1, top, &bad);
  if (!m) return arg_error(L, &c, bad, lua_tostring(L, -1));
  path = package_field(L, "path");
  cpath = package_field(L, "cpath");
  t = calloc(1, sizeof *t);
  if (!t) {
    lcopy_free(m);
    free(path);
    free(cpath);
    return luaL_error(L, "not enough memory");
  }
  atomic_init(&t->refs, 2);   /* the handle's and the thread's */
  atomic_init(&t->finished, 0);
  t->input = m;
  t->path = path;
  t->cpath = cpath;
  pthread_once(&pinned, pin_module_once);
  /* The thread blocks every signal: they stay with the program's threads
  ** (the host's SIGINT handler works on the main state). */
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  rc = pthread_create(&t->tid, NULL, thread_main, t);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (rc != 0) {
    lthread_free(t);
    return luaL_error(L, "lease.thread.spawn: cannot start a thread: %s", strerror(rc));
  }
  h->t = t;
  return 1;
}

/* The thread handle at i; raises for another value. */
static thandle *check_thread(lua_State *L, int i) {
  thandle *h = luaL_checkudata(L, i, THREAD_MT);
  if (!h->t) luaL_error(L, "attempt to use a collected lease.thread");
  return h;
}

/*
** t:join() -> true, ... | false, message
** Waits for the thread to end.  Returns true and fn's results (copied into
** this state), or false and the error message with the thread's traceback
** (file:line of fn included), pcall's shape.  When a result cannot be
** copied back (a coroutine, a userdata...) the outcome is false,
** "result #k: cannot copy ... at t.path".  Raises "thread already joined"
** on a second join (also after __close), and "not enough memory".
** Issue #3.
*/
static int thread_join(lua_State *L) {
  thandle *h = check_thread(L, 1);
  lthread *t = h->t;
  if (h->joined) return luaL_error(L, "thread already joined");
  pthread_join(t->tid, NULL);
  h->joined = 1;
  if (t->ok) {
    lua_pushboolean(L, 1);
    return 1 + lcopy_decode(L, t->results);
  }
  lua_pushboolean(L, 0);
  if (t->err) lua_pushlstring(L, t->err, t->errlen);
  else lua_pushliteral(L, "not enough memory");
  return 2;
}

/*
** __close (local t <close> = thread.spawn(...)): waits for the thread at
** scope exit unless it was joined already.  The outcome is dropped (call
** t:join() inside the scope to read it); a later join raises "thread
** already joined".  Raises nothing.  Issue #3.
*/
static int thread_close(lua_State *L) {
  thandle *h = luaL_checkudata(L, 1, THREAD_MT);
  if (h->t && !h->joined) {
    pthread_join(h->t->tid, NULL);
    h->joined = 1;
  }
  return 0;
}

/*
** __gc: never blocks, never kills.  A thread not joined is detached
** (pthread_detach) and keeps running to its end, then frees its own record
** and state; the process can exit meanwhile.  Its outcome, error included,
** is dropped, never printed.  Raises nothing.  Issue #3.
*/
static int thread_gc(lua_State *L) {
  thandle *h = luaL_checkudata(L, 1, THREAD_MT);
  if (h->t) {
    if (!h->joined) pthread_detach(h->t->tid);
    lthread_unref(h->t);
    h->t = NULL;
  }
  return 0;
}

/* __tostring: "lease.thread: 0x... (running|finished|joined)"; finished
** means the function ended and join will not block.  Issue #3. */
static int thread_tostring(lua_State *L) {
  thandle *h = luaL_checkudata(L, 1, THREAD_MT);
  const char *what = "collected";
  if (h->t) what = h->joined ? "joined" : atomic_load(&h->t->finished) ? "finished" : "running";
  lua_pushfstring(L, "%s: %p (%s)", THREAD_MT, (void *)h, what);
  return 1;
}

/* ===================================================================== */
/* Registration                                                           */
/* ===================================================================== */

static const luaL_Reg module_funcs[] = {
  {"spawn", thread_spawn},
  {"barrier", thread_barrier},
  {"channel", thread_channel},
  {NULL, NULL},
};

static const luaL_Reg thread_methods[] = {
  {"join", thread_join},
  {NULL, NULL},
};

static const luaL_Reg thread_metamethods[] = {
  {"__index", NULL},
  {"__gc", thread_gc},
  {"__close", thread_close},
  {"__tostring", thread_tostring},
  {NULL, NULL},
};

static const luaL_Reg barrier_methods[] = {
  {"wait", barrier_wait},
  {NULL, NULL},
};

static const luaL_Reg barrier_metamethods[] = {
  {"__index", NULL},
  {"__gc", shared_gc},
  {"__tostring", barrier_tostring},
  {NULL, NULL},
};

static const luaL_Reg channel_methods[] = {
  {"send", channel_send},
  {"recv", channel_recv},
  {"close", channel_close},
  {NULL, NULL},
};

static const luaL_Reg channel_metamethods[] = {
  {"__index", NULL},
  {"__gc", shared_gc},
  {"__tostring", channel_tostring},
  {NULL, NULL},
};

/* Create the metatable `name` (with __name) unless L already has it. */
static void new_metatable(lua_State *L, const char *name, const luaL_Reg *meta,
                          const luaL_Reg *methods) {
  if (luaL_newmetatable(L, name)) {
    luaL_setfuncs(L, meta, 0);
    lua_newtable(L);
    luaL_setfuncs(L, methods, 0);
    lua_setfield(L, -2, "__index");
  }
  lua_pop(L, 1);
}

/* Make sure L has the three metatables: decoding a copy may need a barrier
** or channel metatable in a state that never required lease.thread. */
static void ensure_metatables(lua_State *L) {
  luaL_checkstack(L, 4, NULL);
  new_metatable(L, THREAD_MT, thread_metamethods, thread_methods);
  new_metatable(L, BARRIER_MT, barrier_metamethods, barrier_methods);
  new_metatable(L, CHANNEL_MT, channel_metamethods, channel_methods);
}

/* See lease_lua.h: require "lease.thread". */
LEASE_API int luaopen_lease_thread(lua_State *L) {
  ensure_metatables(L);
  luaL_newlib(L, module_funcs);
  return 1;
}
