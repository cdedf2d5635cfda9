/***
Native threads, barriers and channels: `require "lease.thread"`, also
`require("lease").thread`.  Each thread runs in a fresh lua_State; no Lua
value is shared between states: arguments, results and channel messages are
deep copies.
@module lease.thread
*/
/*
** lease_thread.c: the lease.thread module, native threads from Lua
** (contract step 8 is tested with it).
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
#ifndef _GNU_SOURCE
#define _GNU_SOURCE   /* dladdr */
#endif
#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lease_copy.h"
#include "lease_lua_int.h"
#include "lease_shared.h"

#define THREAD_MT "lease.thread"

/* ===================================================================== */
/* Timing                                                                 */
/* ===================================================================== */

/* The kinds of shareable object this module makes (lease_shared.h);
** their methods are defined below. */
static const lshared_kind barrier_kind, channel_kind;

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

/***
Make a reusable barrier (libuv's `uv_barrier_t`) that can be passed to
threads as an argument or through a channel; it lives as long as any state
holds it.
@function barrier
@tparam integer n how many threads each round waits for, 1 to 2^31-1
@treturn barrier
@raise `bad argument #1 to 'lease.thread.barrier' (n must be an integer from
  1 to 2^31-1, got 0)`; "not enough memory"
*/
static int thread_barrier(lua_State *L) {
  lbarrier *b;
  lb_callee c = {"thread.barrier", 0};
  int64_t n = lb_check_integer(L, 1, LB_ARG(&c, 1, "n"), 1, INT32_MAX);
  b = calloc(1, sizeof *b);
  if (!b) return luaL_error(L, "not enough memory");
  atomic_init(&b->base.refs, 0);
  b->base.kind = &barrier_kind;
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

/***
Block until n threads (n as given to thread.barrier) have called wait in this
round, then release them all; the barrier is then ready for the next round.
@function barrier:wait
@treturn boolean true to exactly one of them (the last to arrive), false to
  the others, as `uv_barrier_wait` does
@raise only for a value that is not a barrier
*/
static int barrier_wait(lua_State *L) {
  lbarrier *b = (lbarrier *)lshared_check(L, 1, &barrier_kind);
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
  lbarrier *b = (lbarrier *)lshared_check(L, 1, &barrier_kind);
  lua_pushfstring(L, "%s: %p (n = %d)", barrier_kind.name, (void *)b, (int)b->n);
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

/***
Make a first-in first-out queue of deep-copied values between threads; pass
it to threads as an argument.  It lives as long as any state holds it.
@function channel
@tparam[opt] integer capacity how many messages it holds before send blocks,
  >= 1; nil (the default) means unbounded
@treturn channel
@raise `bad argument #1 to 'lease.thread.channel' (capacity must be an integer
  >= 1 or nil, got 0)`; "not enough memory"
*/
static int thread_channel(lua_State *L) {
  lchannel *ch;
  lb_callee c = {"thread.channel", 0};
  int64_t cap = lb_opt_integer(L, 1, LB_ARG(&c, 1, "capacity"), 1, INT64_MAX, 0);
  ch = calloc(1, sizeof *ch);
  if (!ch) return luaL_error(L, "not enough memory");
  atomic_init(&ch->base.refs, 0);
  ch->base.kind = &channel_kind;
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

/***
Copy a value deep (as spawn copies arguments) and queue it; blocks while the
channel holds `capacity` messages.
@function channel:send
@param value anything thread.spawn can copy, except nil (so that recv's nil
  always comes with a reason)
@treturn boolean true when queued
@treturn[2] boolean false, when the channel is closed (also while send waits)
@treturn[2] string `"closed"`
@raise `bad argument` for nil or a value that cannot be copied (naming its
  type and its path: `cannot copy a coroutine at t.a[3]`); "not enough memory"
*/
static int channel_send(lua_State *L) {
  lchannel *ch = (lchannel *)lshared_check(L, 1, &channel_kind);
  citem *it;
  lcopy *m;
  lb_callee c = {"send", 1};
  int bad;
  if (lua_isnoneornil(L, 2))
    lb_error(L, LB_ARG(&c, 2, NULL), "value must not be nil (recv returns nil only with a reason)");
  lua_settop(L, 2);
  m = lcopy_encode(L, 2, 2, &bad);
  if (!m) return lb_error(L, LB_ARG(&c, 2, NULL), lua_tostring(L, -1));
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

/***
Take the oldest message (a fresh copy in this state).  Messages sent before
close are still received; after them, a closed channel gives nil, "closed".
@function channel:recv
@tparam[opt] number timeout seconds to wait, finite, >= 0; nil (the default)
  waits as long as it takes, 0 only looks
@return the message
@treturn[2] nil
@treturn[2] string `"timeout"` when the time ran out first, `"closed"`
@raise `bad argument` for a bad timeout; "not enough memory"
*/
static int channel_recv(lua_State *L) {
  lchannel *ch = (lchannel *)lshared_check(L, 1, &channel_kind);
  double timeout = -1;   /* < 0: no limit */
  struct timespec until;
  citem *it = NULL;
  lcopy **slot;
  lb_callee c = {"recv", 1};
  int closed;
  timeout = lb_check_number(L, 2, LB_ARG(&c, 2, "timeout"),
                            LB_OPTIONAL | LB_FINITE | LB_SECONDS, 0, -1);
  if (timeout > 1e9) timeout = -1;   /* beyond 30 years: no limit */
  if (timeout == 0) {
    /* only looking: an empty channel answers without making the box (a
    ** userdata with a finalizer, dear for a poll made at every job) */
    pthread_mutex_lock(&ch->mu);
    closed = ch->head ? -1 : ch->closed;
    pthread_mutex_unlock(&ch->mu);
    if (closed >= 0) {
      lua_pushnil(L);
      lua_pushstring(L, closed ? "closed" : "timeout");
      return 2;
    }
  }
  slot = lcopy_newbox(L);   /* made before taking a message: cannot fail after */
  if (timeout >= 0) deadline_after(&until, timeout);
  pthread_mutex_lock(&ch->mu);
  while (!ch->head && !ch->closed && timeout != 0) {
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

/***
Close the channel for every state that holds it: blocked senders and
receivers wake up; send then returns false, "closed"; recv returns the
messages still queued, then nil, "closed".  Closing again does nothing.
@function channel:close
@treturn boolean true
@raise only for a value that is not a channel
*/
static int channel_close(lua_State *L) {
  lchannel *ch = (lchannel *)lshared_check(L, 1, &channel_kind);
  pthread_mutex_lock(&ch->mu);
  ch->closed = 1;
  pthread_cond_broadcast(&ch->readable);
  pthread_cond_broadcast(&ch->writable);
  pthread_mutex_unlock(&ch->mu);
  lua_pushboolean(L, 1);
  return 1;
}

/* Write count n into buf; returns buf. */
static const char *count_text(char *buf, size_t size, size_t n) {
  snprintf(buf, size, "%zu", n);
  return buf;
}

/* __tostring of a channel: "lease.channel: 0x... (2 queued, capacity 8)". */
static int channel_tostring(lua_State *L) {
  lchannel *ch = (lchannel *)lshared_check(L, 1, &channel_kind);
  char num[24], cap[24];
  size_t count;
  int closed;
  pthread_mutex_lock(&ch->mu);
  count = ch->count;
  closed = ch->closed;
  pthread_mutex_unlock(&ch->mu);
  if (ch->capacity)
    lua_pushfstring(L, "%s: %p (%s queued, capacity %s%s)", channel_kind.name, (void *)ch,
                    count_text(num, sizeof num, count), count_text(cap, sizeof cap, ch->capacity),
                    closed ? ", closed" : "");
  else
    lua_pushfstring(L, "%s: %p (%s queued, unbounded%s)", channel_kind.name, (void *)ch,
                    count_text(num, sizeof num, count), closed ? ", closed" : "");
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

/***
Run fn(...) on a new OS thread, in a fresh lua_State with the standard
libraries, `lease` preloaded and this state's package.path and package.cpath.
@function spawn
@tparam function fn a Lua function whose only upvalue may be _ENV (which
  becomes the new state's global table); it moves with lua_dump, unstripped,
  so tracebacks keep its file and lines
@param ... arguments, copied deep: nil, booleans, integers and floats (kept
  apart), strings (any bytes), tables (cycles and shared subtables kept; no
  metatables; at most 200 levels deep), functions as fn, barriers and channels
  (shared)
@treturn thread its handle
@raise `bad argument #k to 'lease.thread.spawn' (...)` when fn is not a Lua
  function, has another upvalue, or argument k (or something inside it, named
  by its path such as t.a[3]) cannot be copied: coroutines, userdata (a
  lease.db handle included: open one in the thread), C functions, tables with
  metatables; `lease.thread.spawn: cannot start a thread: ...` when the system
  refuses one
*/
static int thread_spawn(lua_State *L) {
  static pthread_once_t pinned = PTHREAD_ONCE_INIT;
  int top = lua_gettop(L), bad, rc;
  char *path, *cpath;
  sigset_t all, old;
  thandle *h;
  lthread *t;
  lcopy *m;
  lb_callee c = {"thread.spawn", 0};
  if (lua_type(L, 1) != LUA_TFUNCTION) lb_fail(L, 1, LB_ARG(&c, 1, "fn"), "a function");
  if (lua_iscfunction(L, 1))
    lb_error(L, LB_ARG(&c, 1, NULL), "fn must be a Lua function, got a C function");
  /* The handle first, closed (liolib's newprefile): if anything below
  ** raises, its __gc has nothing to undo. */
  h = lua_newuserdatauv(L, sizeof *h, 0);
  h->t = NULL;
  h->joined = 0;
  luaL_setmetatable(L, THREAD_MT);
  m = lcopy_encode(L, 1, top, &bad);
  if (!m) return lb_error(L, LB_ARG(&c, bad, NULL), lua_tostring(L, -1));
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

/***
Wait for the thread to end, pcall's shape.  When a result cannot be copied
back (a coroutine, a userdata...) the outcome is false,
"result #k: cannot copy ... at t.path".  `__close` (`local t <close> =
thread.spawn(...)`) also waits, dropping the outcome; `__gc` never blocks
and never kills: a thread not joined is detached and runs to its end.
@function thread:join
@treturn boolean true
@return ... fn's results, copied into this state
@treturn[2] boolean false
@treturn[2] string the error message with the thread's traceback
@raise "thread already joined" on a second join (also after `__close`);
  "not enough memory"
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
** already joined".  Raises nothing.
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
** is dropped, never printed.  Raises nothing.
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
** means the function ended and join will not block. */
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
  {"__tostring", channel_tostring},
  {NULL, NULL},
};

static const lshared_kind barrier_kind = {"lease.barrier", barrier_methods, barrier_metamethods};
static const lshared_kind channel_kind = {"lease.channel", channel_methods, channel_metamethods};

/* Make sure L has the three metatables: decoding a copy may need a barrier
** or channel metatable in a state that never required lease.thread. */
static void ensure_metatables(lua_State *L) {
  luaL_checkstack(L, 4, NULL);
  if (luaL_newmetatable(L, THREAD_MT)) {
    luaL_setfuncs(L, thread_metamethods, 0);
    lua_newtable(L);
    luaL_setfuncs(L, thread_methods, 0);
    lua_setfield(L, -2, "__index");
  }
  lua_pop(L, 1);
  lshared_metatable(L, &barrier_kind);
  lshared_metatable(L, &channel_kind);
}

/* See lease_lua.h: require "lease.thread". */
LEASE_API int luaopen_lease_thread(lua_State *L) {
  ensure_metatables(L);
  luaL_newlib(L, module_funcs);
  return 1;
}
