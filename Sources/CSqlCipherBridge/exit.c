/*
** A process that exits while its threads still call SQLCipher.
**
** exit() runs the process's atexit handlers while every other thread keeps running. The handler
** that matters here is OpenSSL's: libcrypto's first initialisation registers OPENSSL_cleanup,
** which frees every cipher, digest and MAC object while other threads may still be decrypting
** pages with them, and the process dies in malloc or with SIGSEGV (measured here: about half of
** the exits of a program whose tasks were reading). A service that stops and a command-line tool
** that returns from its top-level code while a detached task still queries both do this.
**
** Two measures, chosen at load time (scb_exit_prepare, called by loader.c):
**   1. When libcrypto arrived in the process with libsqlcipher, nothing can have initialised it
**      yet: one OPENSSL_init_crypto(OPENSSL_INIT_NO_ATEXIT) call, before the library's first
**      crypto call, means OpenSSL never registers its cleanup, and exit needs nothing more.
**   2. When libcrypto was already in the process (another component loaded it, and may have
**      initialised it with the cleanup registered), or when the library is SQLCipher 4.7 or later
**      (which registers an atexit cleanup of its own that frees its private heap and mutexes),
**      the bridge registers its own atexit handler,
**      which runs before that earlier registration. The handler interrupts every open
**      connection, waits until no thread is inside a call of the library (the exit gate below),
**      and from then on refuses any call that another thread starts (it fails with
**      SQLITE_INTERRUPT without reaching the library), so that OpenSSL's cleanup runs
**      with nobody using what it frees. The wait is bounded (SCB_EXIT_WAIT_MS): a thread stuck
**      longer (a key derivation, a rekey or a checkpoint of a large file, which cannot be
**      interrupted) is left to the cleanup, as without the handler.
**
** The exit gate. Each wrapper that can reach the pager or the crypto provider (opening, keying,
** preparing, stepping, resetting, finalising, closing, backups, checkpoints, key derivation)
** enters it for the duration of the call. Entering must cost next to nothing (sqlite3_step runs
** once per row), so each thread counts its own calls in a slot of its own, and the ordering the
** gate needs (a thread's "I am inside" against the handler's "exit has begun") is made
** asymmetric: the entering thread needs only a compiler barrier, and the handler, which runs
** once, forces a full memory barrier on every thread of the process with
** membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) (Linux 4.14). Where that is not available, the
** entering thread pays a full fence instead. Without the handler (measure 1, or a crypto
** provider other than OpenSSL) nothing ever waits at the gate, so scb_exit_prepare turns it off
** and the wrappers call the library directly.
**
** Only libc and the Linux system call interface are used.
*/
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include "bridge_internal.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#if defined(__linux__)
#include <link.h>
#include <sys/syscall.h>
#endif

/* The membarrier(2) commands used (linux/membarrier.h, not included: musl's toolchain ships no
** kernel headers). */
#define SCB_MEMBARRIER_CMD_QUERY 0
#define SCB_MEMBARRIER_CMD_PRIVATE_EXPEDITED (1 << 3)
#define SCB_MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED (1 << 4)

/* How long the exit handler waits for threads to leave the library, in milliseconds. */
#define SCB_EXIT_WAIT_MS 10000

_Thread_local scb_exit_slot *scb_exit_my_slot;
atomic_int scb_exit_started;
/* On until scb_exit_prepare finds that no handler is needed: a call counted needlessly is only
** slower, a call not counted while the handler waits would be unsafe. */
atomic_int scb_exit_gate_on = 1;
int scb_exit_full_fence;

/* Every slot ever attached; slots are reused, never freed. Appended under the lock. */
static scb_exit_slot *_Atomic scb_exit_slots;
static pthread_mutex_t scb_exit_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t scb_exit_key_once = PTHREAD_ONCE_INIT;
static pthread_key_t scb_exit_key;
static pthread_t scb_exit_thread;  /* the thread running exit(); set before scb_exit_started */

/* The open connections, for the handler's interrupt. Under scb_exit_lock. */
static scb_db **scb_exit_connections;
static size_t scb_exit_connection_count, scb_exit_connection_capacity;

/* pthread key destructor: a thread that ends gives its slot back for the next thread. */
static void scb_exit_release_slot(void *slot) {
    scb_exit_slot *s = slot;
    scb_exit_my_slot = NULL;
    atomic_store_explicit(&s->depth, 0, memory_order_release);
    atomic_store_explicit(&s->in_use, 0, memory_order_release);
}

static void scb_exit_make_key(void) { pthread_key_create(&scb_exit_key, scb_exit_release_slot); }

/*
** Guarantees: returns this thread's slot, taking a free one or appending a new one on the
** thread's first call; the slot is given back when the thread ends. NULL only when memory runs
** out, in which case the caller runs ungated (as every call did before the gate existed).
*/
scb_exit_slot *scb_exit_attach(void) {
    pthread_once(&scb_exit_key_once, scb_exit_make_key);
    pthread_mutex_lock(&scb_exit_lock);
    scb_exit_slot *slot = NULL;
    for (scb_exit_slot *s = atomic_load_explicit(&scb_exit_slots, memory_order_acquire); s; s = s->next) {
        if (!atomic_load_explicit(&s->in_use, memory_order_acquire)) {
            slot = s;
            break;
        }
    }
    if (slot == NULL && (slot = calloc(1, sizeof *slot)) != NULL) {
        slot->next = atomic_load_explicit(&scb_exit_slots, memory_order_relaxed);
        atomic_store_explicit(&scb_exit_slots, slot, memory_order_release);
    }
    if (slot != NULL) {
        atomic_store_explicit(&slot->depth, 0, memory_order_relaxed);
        atomic_store_explicit(&slot->in_use, 1, memory_order_release);
        pthread_setspecific(scb_exit_key, slot);
    }
    pthread_mutex_unlock(&scb_exit_lock);
    scb_exit_my_slot = slot;
    return slot;
}

/*
** Called by a thread that found exit under way as it entered the gate. Guarantees: returns 0 on
** the exiting thread itself, whose call goes on (its own atexit handlers may still use a
** database); otherwise leaves the gate and returns 1, and the caller returns without calling the
** library, so the thread holds nothing of it while the cleanup runs.
**
** Refused, not parked: a thread parked for good kept whatever it held (a lock of the program, the
** answer another thread waits for), and an atexit handler that waited for such a thread (one
** that saves with a database, whose calls run on the database's own thread) hung the process
** forever. A refused call fails like an interrupted one; the program's error paths run, and no
** call reaches the library.
*/
int scb_exit_refuse(scb_exit_slot *slot) {
    if (pthread_equal(pthread_self(), scb_exit_thread)) return 0;
    atomic_store_explicit(&slot->depth, 0, memory_order_release);
    return 1;
}

/* Guarantees: 1 exactly when scb_gate_enter would refuse this thread's next outermost call. */
int scb_exit_refusing(void) {
    return atomic_load_explicit(&scb_exit_started, memory_order_acquire) &&
           !pthread_equal(pthread_self(), scb_exit_thread);
}

/* Records an open connection for the handler's interrupt; a full table only skips the interrupt. */
void scb_exit_track(scb_db *db) {
    if (db == NULL || !atomic_load_explicit(&scb_exit_gate_on, memory_order_relaxed)) return;
    pthread_mutex_lock(&scb_exit_lock);
    if (scb_exit_connection_count == scb_exit_connection_capacity) {
        size_t capacity = scb_exit_connection_capacity ? scb_exit_connection_capacity * 2 : 64;
        scb_db **grown = realloc(scb_exit_connections, capacity * sizeof *grown);
        if (grown != NULL) {
            scb_exit_connections = grown;
            scb_exit_connection_capacity = capacity;
        }
    }
    if (scb_exit_connection_count < scb_exit_connection_capacity) {
        scb_exit_connections[scb_exit_connection_count++] = db;
    }
    pthread_mutex_unlock(&scb_exit_lock);
}

/* Forgets a connection before it closes, so the handler never interrupts a closed one. */
void scb_exit_untrack(scb_db *db) {
    if (!atomic_load_explicit(&scb_exit_gate_on, memory_order_relaxed)) return;
    pthread_mutex_lock(&scb_exit_lock);
    for (size_t i = 0; i < scb_exit_connection_count; i++) {
        if (scb_exit_connections[i] == db) {
            scb_exit_connections[i] = scb_exit_connections[--scb_exit_connection_count];
            break;
        }
    }
    pthread_mutex_unlock(&scb_exit_lock);
}

static int64_t scb_exit_now_ms(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

/* Whether a thread other than the caller is inside the library. */
static int scb_exit_anyone_inside(void) {
    scb_exit_slot *mine = scb_exit_my_slot;
    for (scb_exit_slot *s = atomic_load_explicit(&scb_exit_slots, memory_order_acquire); s; s = s->next) {
        if (s != mine && atomic_load_explicit(&s->depth, memory_order_acquire) > 0) return 1;
    }
    return 0;
}

/* 0 before any exit; 1 while the first exiting thread closes the gate; 2 once it has. */
static atomic_int scb_exit_phase;

/* Whether the gate is closed (phase 2): what a second exiting thread waits for. */
static int scb_exit_gate_open(void) { return atomic_load(&scb_exit_phase) != 2; }

/*
** Waits, in steps of 1 ms, while still_waiting() is true and for at most wait_ms. Guarantees to
** return by then whatever the other threads do: an exit is never held for good.
*/
static void scb_exit_wait_while(int (*still_waiting)(void), int64_t wait_ms) {
    int64_t deadline = scb_exit_now_ms() + wait_ms;
    while (still_waiting() && scb_exit_now_ms() < deadline) {
        struct timespec pause_for = {0, 1000000};
        nanosleep(&pause_for, NULL);
    }
}

/*
** The atexit handler of measure 2, registered twice in a row. Guarantees: when it returns, no
** other thread is inside a gated call (or SCB_EXIT_WAIT_MS passed), and no other thread will
** enter one again (its calls are refused), whichever thread runs it and however many threads
** call exit() at once.
**
** Two threads in exit() at once run the handler list together: glibc hands each the next handler
** not yet started, so while the first waits here for the threads inside, the second would be
** handed the next one, OpenSSL's cleanup, and free the ciphers under a thread still writing (a
** page encrypted then was written as garbage, and the file read as malformed). The second copy of
** this handler is that next one: the second exiting thread waits in it until the first has closed
** the gate. A single exit runs the copy too, and it returns at once.
*/
static void scb_exit_handler(void) {
    int expected = 0;
    if (!atomic_compare_exchange_strong(&scb_exit_phase, &expected, 1)) {
        scb_exit_wait_while(scb_exit_gate_open, SCB_EXIT_WAIT_MS + 1000);
        return;
    }
    scb_exit_thread = pthread_self();
    atomic_store_explicit(&scb_exit_started, 1, memory_order_seq_cst);
#if defined(__linux__) && defined(SYS_membarrier)
    if (!scb_exit_full_fence) syscall(SYS_membarrier, SCB_MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0);
#endif
    atomic_thread_fence(memory_order_seq_cst);
    /* SQLite's busy wait ignores the interrupt: a connection waiting for a lock that a thread
    ** now refused will never release would hold the exit for its whole busy timeout. A timeout
    ** of 1 ms ends the wait at its next step (the default handler reads it on every step); only
    ** the timeout changes, so a thread reading the handler while it is set sees the same
    ** function and argument. Both calls take no lock: the package opens every connection with
    ** SQLITE_OPEN_NOMUTEX (no connection mutex), so neither can wait for a thread inside. */
    pthread_mutex_lock(&scb_exit_lock);
    for (size_t i = 0; i < scb_exit_connection_count; i++) {
        scb_fn.interrupt(scb_exit_connections[i]);
        scb_fn.busy_timeout(scb_exit_connections[i], 1);
    }
    pthread_mutex_unlock(&scb_exit_lock);
    scb_exit_wait_while(scb_exit_anyone_inside, SCB_EXIT_WAIT_MS);
    atomic_store(&scb_exit_phase, 2);
}

/* fork() child: only the forking thread exists there, so every other slot is idle. */
static void scb_exit_after_fork(void) {
    scb_exit_slot *mine = scb_exit_my_slot;
    for (scb_exit_slot *s = atomic_load_explicit(&scb_exit_slots, memory_order_acquire); s; s = s->next) {
        if (s != mine) {
            atomic_store_explicit(&s->depth, 0, memory_order_relaxed);
            atomic_store_explicit(&s->in_use, 0, memory_order_relaxed);
        }
    }
    pthread_mutex_init(&scb_exit_lock, NULL);
}

/*
** fork() in a process whose threads use the library. A child of fork() has only the forking
** thread, but every mutex that another thread of the parent held at that moment stays locked in
** it for good. Measured: SQLCipher 4.7 and later register an atexit cleanup
** (sqlcipher_extra_shutdown) that frees memory through SQLite's allocator, which takes SQLite's
** memory mutex, and through SQLCipher's private heap, which takes SQLCipher's memory mutex, so a
** child that merely called exit() while a reader of the parent was allocating hung there for
** ever (4.9.0 and 4.7.0: most forks of a program whose tasks read); and a child that opened a
** database hung on SQLite's memory mutex or on SQLCipher's provider mutex with every release
** (4.6.1: about one fork in ten).
**
** The handlers below hold the library's global mutexes across fork(), the way glibc's malloc
** keeps its arenas usable in the child, so that they are free in the parent and in the child
** when fork() returns. They are taken in the order in which the library nests them, so the
** prepare handler never holds one that another thread holds while that thread waits for it:
**   SQLite's main mutex     (held while SQLCipher activates and registers its providers),
**   SQLCipher's provider, activation and random mutexes (provider, then activation, nest),
**   SQLite's unix VFS mutex (its list of open files: code holding it allocates),
**   SQLCipher's memory mutex (4.7 and later; SQLCipher calls SQLite's allocator after leaving it),
**   SQLite's memory mutex   (SQLite's allocator takes nothing while it holds it).
** SQLCipher's own are looked up at every fork, since a release allocates them when it first
** activates; one a release does not have (3.4.1 exports none) is skipped. None of them is held
** across a callback into the program, so a fork() from a SQL function or a trace callback finds
** them free too. What a child may do with the library afterwards stays what POSIX allows a child
** of a threaded program: exit, or exec. One that opens a database can still meet a lock that a
** thread of the parent held inside the crypto library.
*/
typedef void *(*scb_mutex_alloc_fn)(int);
typedef void (*scb_mutex_fn)(void *);
/* The mutexes, in order: SQLite's static ones by their SQLITE_MUTEX_STATIC_* number (sqlite3.h),
** SQLCipher's by its SQLCIPHER_MUTEX_* number (sqlcipher.h) plus 100. */
static const int scb_fork_order[] = {
    2,       /* SQLITE_MUTEX_STATIC_MAIN */
    100 + 0, /* SQLCIPHER_MUTEX_PROVIDER */
    100 + 1, /* SQLCIPHER_MUTEX_PROVIDER_ACTIVATE */
    100 + 2, /* SQLCIPHER_MUTEX_PROVIDER_RAND */
    11,      /* SQLITE_MUTEX_STATIC_VFS1: os_unix.c's unixBigLock */
    100 + 6, /* SQLCIPHER_MUTEX_MEM (4.7 and later; out of range, so NULL, before) */
    3,       /* SQLITE_MUTEX_STATIC_MEM */
};
#define SCB_FORK_MUTEXES ((int)(sizeof scb_fork_order / sizeof scb_fork_order[0]))
static scb_mutex_alloc_fn scb_fork_alloc, scb_fork_sqlcipher_mutex;
static scb_mutex_fn scb_fork_enter, scb_fork_leave;
/* The mutexes the prepare handler took, for the parent and child handlers. Written and read by
** the forking thread only (fork() runs the three handlers on it, in order). */
static void *scb_fork_held[SCB_FORK_MUTEXES];
static int scb_fork_held_count;

/* pthread_atfork prepare handler: takes the mutexes in their order. */
static void scb_fork_prepare(void) {
    scb_fork_held_count = 0;
    for (int i = 0; i < SCB_FORK_MUTEXES; i++) {
        int id = scb_fork_order[i];
        void *mutex = id < 100 ? scb_fork_alloc(id)
                               : scb_fork_sqlcipher_mutex ? scb_fork_sqlcipher_mutex(id - 100) : NULL;
        if (mutex == NULL) continue;
        scb_fork_enter(mutex);
        scb_fork_held[scb_fork_held_count++] = mutex;
    }
}

/* pthread_atfork parent and child handler: gives them back in the reverse order. All are normal
** (non-recursive) mutexes, which the child may unlock although the parent's thread locked them. */
static void scb_fork_release(void) {
    while (scb_fork_held_count > 0) scb_fork_leave(scb_fork_held[--scb_fork_held_count]);
}

void scb_fork_guard_install(void *handle) {
    static atomic_int installed;
    if (atomic_exchange(&installed, 1)) return;
    scb_fork_alloc = (scb_mutex_alloc_fn)dlsym(handle, "sqlite3_mutex_alloc");
    scb_fork_enter = (scb_mutex_fn)dlsym(handle, "sqlite3_mutex_enter");
    scb_fork_leave = (scb_mutex_fn)dlsym(handle, "sqlite3_mutex_leave");
    if (scb_fork_alloc == NULL || scb_fork_enter == NULL || scb_fork_leave == NULL) return;
    scb_fork_sqlcipher_mutex = (scb_mutex_alloc_fn)dlsym(handle, "sqlcipher_mutex");
    pthread_atfork(scb_fork_prepare, scb_fork_release, scb_fork_release);
}

#if defined(__GLIBC__)
/* Whether the object `early` comes before `late` in the process's load order (its link map). */
static int scb_exit_loaded_before(const struct link_map *early, const struct link_map *late) {
    for (const struct link_map *m = late ? late->l_prev : NULL; m; m = m->l_prev) {
        if (m == early) return 1;
    }
    return 0;
}
#endif

/*
** OpenSSL's OPENSSL_init_crypto (https://docs.openssl.org/3.0/man3/OPENSSL_init_crypto/), as a
** function-pointer type, and its OPENSSL_INIT_NO_ATEXIT option (OpenSSL 1.1.1b and later; an
** older libcrypto ignores an option bit it does not know).
*/
typedef int (*scb_openssl_init_fn)(uint64_t, const void *);
#define SCB_OPENSSL_INIT_NO_ATEXIT 0x00080000ULL

int scb_exit_prepare(void *handle, int library_was_present) {
    /* SQLCipher 4.7 and later clean up after themselves at exit, whatever their crypto provider:
    ** their first initialisation registers an atexit handler (sqlcipher_atexit ->
    ** sqlcipher_extra_shutdown) that frees SQLCipher's private heap, crypto providers and mutexes
    ** while other threads may still be inside the library (measured with 4.9.0: SIGSEGV in most
    ** exits while tasks read, and an atexit handler registered before the first database that
    ** used one crashed). Such a library exports sqlcipher_extra_shutdown, and always gets the
    ** gate. */
    int cleans_up_at_exit = dlsym(handle, "sqlcipher_extra_shutdown") != NULL;
    /* The library's own dependencies: the scope dlsym searches on `handle`, which is the scope
    ** RTLD_DEEPBIND makes the library's references search first. */
    scb_openssl_init_fn init = (scb_openssl_init_fn)dlsym(handle, "OPENSSL_init_crypto");
    if (init == NULL && !cleans_up_at_exit) {
        atomic_store(&scb_exit_gate_on, 0);
        return SCB_EXIT_NOT_OPENSSL;
    }
    int crypto_was_present = library_was_present;
    if (init != NULL) {
#if defined(__GLIBC__)
        struct link_map *library = NULL, *crypto = NULL;
        Dl_info info;
        if (dlinfo(handle, RTLD_DI_LINKMAP, &library) != 0 || library == NULL ||
            dladdr1((const void *)init, &info, (void **)&crypto, RTLD_DL_LINKMAP) == 0 || crypto == NULL ||
            scb_exit_loaded_before(crypto, library)) {
            crypto_was_present = 1;
        }
#else
        crypto_was_present = 1; /* no dladdr1 to tell (musl): assume the worst and use the gate */
#endif
        init(SCB_OPENSSL_INIT_NO_ATEXIT, NULL);
    }
    /* Initialised here, now that OpenSSL's own cleanup is off, so that SQLCipher's handler is
    ** registered before the bridge's, which then runs first and keeps every thread out of the
    ** library before SQLCipher frees anything. (The loader makes it safe for a child of fork() to
    ** exit once the library is proven: scb_fork_guard_install.) */
    if (cleans_up_at_exit) {
        int (*initialize)(void) = (int (*)(void))dlsym(handle, "sqlite3_initialize");
        if (initialize != NULL) (void)initialize();
        crypto_was_present = 1;
    }
    if (!crypto_was_present) {
        /* No handler will run, so nothing ever waits at the gate: its count would be pure cost
        ** (about 25 instructions on every step, reset, prepare and finalize). */
        atomic_store(&scb_exit_gate_on, 0);
        return SCB_EXIT_CLEANUP_OFF;
    }

    static atomic_int installed;
    if (atomic_exchange(&installed, 1)) return SCB_EXIT_GATED;
    scb_exit_full_fence = 1;
#if defined(__linux__) && defined(SYS_membarrier)
    long supported = syscall(SYS_membarrier, SCB_MEMBARRIER_CMD_QUERY, 0, 0);
    if (supported > 0 && (supported & SCB_MEMBARRIER_CMD_PRIVATE_EXPEDITED) &&
        syscall(SYS_membarrier, SCB_MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0) {
        scb_exit_full_fence = 0;
    }
#endif
    pthread_atfork(NULL, NULL, scb_exit_after_fork);
    atexit(scb_exit_handler);
    atexit(scb_exit_handler); /* the copy a second exiting thread runs first (see the handler) */
    return SCB_EXIT_GATED;
}
