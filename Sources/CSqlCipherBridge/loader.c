/*
** Loading and proving the SQLCipher library.
**
** scb_load runs this sequence under one process-wide lock, and publishes the function table only
** when every step passed:
**   1. resolve the path to an absolute, symlink-free file name (a bare name, without '/', is
**      looked up by dlopen itself, as the dynamic linker looks up any bare name);
**   2. refuse a runtime that cannot host an isolated load: a fully static executable (its libc
**      is not the one the library links) and sanitizers (they abort on RTLD_DEEPBIND);
**   3. refuse a file whose ELF segments reach past its end (dlopen would SIGBUS on it), then
**      dlopen with the platform's isolating flags (glibc: RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
**   4. dlsym every required function and prove that each lies in the library itself;
**   5. audit the library's relocations against every symbol it defines itself (audit.c);
**   6. make exit safe while threads still call the library (exit.c: libcrypto's cleanup at exit
**      turned off, or the bridge's exit gate);
**   7. prove the identity: a keyed in-memory database answers PRAGMA cipher_version.
** Any failure closes the handle and leaves the bridge unloaded.
*/
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include "bridge_internal.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#if defined(__linux__)
#include <link.h>
#endif

scb_api scb_fn;
atomic_int scb_loaded;

static pthread_mutex_t scb_lock = PTHREAD_MUTEX_INITIALIZER;
static void *scb_handle;
static char scb_path[PATH_MAX];
static const char *scb_method = "";
static int scb_was_present;
static int scb_checked;
static int scb_checked_family[SCB_FAMILY_COUNT];
static int scb_audit_available;
static int scb_exit_mode_found;
static char scb_cipher[128];
static char scb_provider[128];
static char scb_provider_version[256];

static void scb_fail(scb_load_report *r, int status, const char *fmt, const char *a, const char *b) {
    r->status = status;
    snprintf(r->message, sizeof r->message, fmt, a ? a : "", b ? b : "");
}

/* The dlopen flags that keep the library's own references inside it, and their name. */
static int scb_isolating_flags(const char **name) {
#if defined(__APPLE__)
    *name = "RTLD_NOW|RTLD_LOCAL|RTLD_FIRST";
    return RTLD_NOW | RTLD_LOCAL | RTLD_FIRST;
#elif defined(RTLD_DEEPBIND)
    *name = "RTLD_NOW|RTLD_LOCAL|RTLD_DEEPBIND";
    return RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND;
#else
    *name = "RTLD_NOW|RTLD_LOCAL";
    return RTLD_NOW | RTLD_LOCAL;
#endif
}

#if defined(RTLD_DEEPBIND) || defined(__APPLE__)
#define SCB_DEEPBIND_NOTE ""
#else
#define SCB_DEEPBIND_NOTE \
    "; this C library has no RTLD_DEEPBIND (musl), so the audit is the only isolation check there"
#endif

#if defined(RTLD_DEEPBIND) && !defined(__APPLE__)
/*
** Names a sanitizer runtime present in the process, or NULL. Each runtime exports its init
** function to the global scope (the instrumented program, or a preloaded runtime, puts it there),
** so dlsym(RTLD_DEFAULT) finds it whichever way the runtime arrived.
*/
static const char *scb_sanitizer_runtime(void) {
    static const char *const probes[][2] = {
        {"__asan_init", "AddressSanitizer"},
        {"__tsan_init", "ThreadSanitizer"},
        {"__msan_init", "MemorySanitizer"},
        {"__hwasan_init", "HWAddressSanitizer"},
    };
    for (size_t i = 0; i < sizeof probes / sizeof probes[0]; i++) {
        if (dlsym(RTLD_DEFAULT, probes[i][0]) != NULL) return probes[i][1];
    }
    return NULL;
}
#endif

#if defined(__linux__)
/* dl_iterate_phdr callback: reports whether the first object, the executable, has a PT_INTERP. */
static int scb_main_has_interpreter(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    int *has = data;
    for (ElfW(Half) i = 0; i < info->dlpi_phnum; i++) {
        if (info->dlpi_phdr[i].p_type == PT_INTERP) *has = 1;
    }
    return 1; /* the executable is always the first object reported: stop there */
}
#endif

/*
** Guarantees: returns 1 only when the executable carries no PT_INTERP program header, that is
** when no dynamic linker started it and its C library is linked in statically (gcc -static,
** swiftc -static-executable, static-pie); 0 otherwise and where ELF program headers cannot be
** read. Loads nothing and takes no lock.
**
** Why it matters: dlopen in such a process maps a second, dynamic libc for libsqlcipher and
** libcrypto. The process's threads, locks and thread-locals belong to the static copy, so
** libcrypto's one-time initialisation can leave its global lock NULL; SQLCipher's first HMAC
** (EVP_MAC_fetch) then crashes in pthread_rwlock_rdlock(NULL). Refusing is the only safe answer.
*/
int scb_static_c_library(void) {
#if defined(__linux__)
    int has_interpreter = 0;
    dl_iterate_phdr(scb_main_has_interpreter, &has_interpreter);
    return has_interpreter ? 0 : 1;
#else
    return 0;
#endif
}

/* Runs one single-row text query on `db` with the candidate table; copies the first column. */
static int scb_query_text(const scb_api *api, scb_db *db, const char *sql, char *out, size_t len) {
    scb_stmt *stmt = NULL;
    out[0] = 0;
    if (api->prepare_v2(db, sql, -1, &stmt, NULL) != SCB_SQLITE_OK || stmt == NULL) {
        if (stmt) api->finalize(stmt);
        return -1;
    }
    int rc = api->step(stmt);
    if (rc == SCB_SQLITE_ROW) {
        const unsigned char *text = api->column_text(stmt, 0);
        snprintf(out, len, "%s", text ? (const char *)text : "");
    }
    api->finalize(stmt);
    return rc == SCB_SQLITE_ROW || rc == SCB_SQLITE_DONE ? 0 : -1;
}

/*
** Guarantees: returns 0 only when a keyed in-memory connection of the candidate library reports a
** non-empty cipher_version; fills the identity strings.
*/
static int scb_prove_identity(const scb_api *api, scb_load_report *r) {
    scb_db *db = NULL;
    int flags = SCB_SQLITE_OPEN_READWRITE | SCB_SQLITE_OPEN_CREATE | SCB_SQLITE_OPEN_MEMORY;
    if (api->open_v2(":memory:", &db, flags, NULL) != SCB_SQLITE_OK) {
        if (db) api->close_v2(db);
        scb_fail(r, SCB_LOAD_NOT_SQLCIPHER, "could not open an in-memory database with it%s%s", NULL, NULL);
        return -1;
    }
    static const char probe_key[] = "sqlcipherkit-identity-probe";
    int rc = api->key(db, probe_key, (int)(sizeof probe_key - 1));
    int ok = rc == SCB_SQLITE_OK &&
             scb_query_text(api, db, "PRAGMA cipher_version", scb_cipher, sizeof scb_cipher) == 0 &&
             scb_cipher[0] != 0;
    if (ok) {
        scb_query_text(api, db, "PRAGMA cipher_provider", scb_provider, sizeof scb_provider);
        scb_query_text(api, db, "PRAGMA cipher_provider_version", scb_provider_version,
                       sizeof scb_provider_version);
    }
    api->close_v2(db);
    if (!ok) {
        scb_fail(r, SCB_LOAD_NOT_SQLCIPHER,
                 "a keyed database reports no cipher_version (sqlite3_key returned %s): the library "
                 "accepts a key but does not encrypt%s",
                 rc == SCB_SQLITE_OK ? "OK" : "an error", NULL);
        return -1;
    }
    return 0;
}

/*
** Resolves every function into `api` and proves each lies in the library itself.
** Guarantees: returns 0 only with every required field set to the library's own definition.
*/
static int scb_resolve(void *handle, scb_api *api, scb_load_report *r) {
    char owner[1024];
    memset(api, 0, sizeof *api);
#define SCB_RESOLVE(ret, name, args) \
    api->name = (ret(*) args)dlsym(handle, "sqlite3_" #name); \
    if (api->name == NULL) { \
        snprintf(r->symbol, sizeof r->symbol, "%s", "sqlite3_" #name); \
        if (api->libversion != NULL && (strcmp(#name, "key") == 0 || strcmp(#name, "rekey") == 0)) { \
            scb_fail(r, SCB_LOAD_NOT_SQLCIPHER, \
                     "it exports no %s: it is a plain SQLite %s, without encryption", \
                     "sqlite3_" #name, api->libversion()); \
        } else { \
            scb_fail(r, SCB_LOAD_MISSING_SYMBOL, "it does not export the required function %s%s", \
                     "sqlite3_" #name, NULL); \
        } \
        return -1; \
    } \
    if (!scb_address_in_library(handle, (const void *)api->name, owner, sizeof owner)) { \
        snprintf(r->symbol, sizeof r->symbol, "%s", "sqlite3_" #name); \
        snprintf(r->object, sizeof r->object, "%s", owner); \
        scb_fail(r, SCB_LOAD_NOT_SQLCIPHER, \
                 "it does not define %s itself; the definition found belongs to %s", \
                 "sqlite3_" #name, owner); \
        return -1; \
    }
    SCB_REQUIRED_FUNCTIONS(SCB_RESOLVE)
#undef SCB_RESOLVE
#define SCB_RESOLVE_OPTIONAL(ret, name, args) \
    api->name = (ret(*) args)dlsym(handle, "sqlite3_" #name); \
    if (api->name && !scb_address_in_library(handle, (const void *)api->name, owner, sizeof owner)) \
        api->name = NULL;
    SCB_OPTIONAL_FUNCTIONS(SCB_RESOLVE_OPTIONAL)
#undef SCB_RESOLVE_OPTIONAL
    return 0;
}

/*
** Steps 4 to 7 of the sequence for a library that `handle` holds open (with the isolating flags),
** found at `real`. Guarantees: returns 0 with the table published and the handle kept; otherwise
** closes the handle, fills the report and leaves the bridge unloaded.
*/
static int scb_prove_and_publish(void *handle, const char *real, const char *method, int was_present,
                                 scb_load_report *r) {
    scb_api api;
    if (scb_resolve(handle, &api, r) != 0) {
        dlclose(handle);
        return -1;
    }

    scb_audit_result audit;
    if (scb_audit_library(handle, &audit) != 0) {
        /* Where the loader has no RTLD_DEEPBIND (musl), the audit is the only isolation check, so
        ** the message names the platform as well as the library. */
        scb_fail(r, SCB_LOAD_UNSUPPORTED_RUNTIME, "the binding audit could not read the library: %s%s",
                 audit.error, SCB_DEEPBIND_NOTE);
        dlclose(handle);
        return -1;
    }
    r->audit_checked = audit.checked;
    r->audit_foreign = audit.foreign;
    memcpy(r->audit_checked_family, audit.checked_family, sizeof r->audit_checked_family);
    memcpy(r->audit_foreign_family, audit.foreign_family, sizeof r->audit_foreign_family);
    if (audit.foreign > 0 && audit.unbound == audit.foreign) {
        /* Every slot that differs is a lazy PLT slot not filled yet, of a library that is not
        ** linked with -z now and came into the process before this RTLD_NOW dlopen (which does not
        ** rebind an object already loaded), and the global scope has no definition of its symbol
        ** (audit.c): nothing is bound elsewhere yet, but a later global load of another SQLite
        ** would come first, so the load is refused; the reason names lazy binding and the ways out.
        ** Lazy slots whose global-scope definition is the library's own are proven local and are
        ** not counted (a program that links libsqlcipher alone, or before libsqlite3). */
        snprintf(r->symbol, sizeof r->symbol, "%s", audit.first_symbol);
        snprintf(r->object, sizeof r->object, "%s", audit.first_object);
        r->status = SCB_LOAD_UNSUPPORTED_RUNTIME;
        snprintf(r->message, sizeof r->message,
                 "the library was already loaded in this process with lazy binding (it is not linked "
                 "with -z now, and something opened it before SqlCipherKit without making it global), "
                 "so %d of its %d references to its own functions (e.g. %s) are not bound yet: the "
                 "dynamic linker binds each at its first call, in the process's global scope first, "
                 "where another SQLite loaded later can come first, so they cannot be proven",
                 audit.unbound, audit.checked, audit.first_symbol);
        dlclose(handle);
        return -1;
    }
    if (audit.foreign > 0) {
        snprintf(r->symbol, sizeof r->symbol, "%s", audit.first_symbol);
        snprintf(r->object, sizeof r->object, "%s", audit.first_object);
        r->status = SCB_LOAD_BINDING_CONFLICT;
        snprintf(r->message, sizeof r->message,
                 "%d of the library's %d references to its own functions resolve outside it "
                 "(sqlite3_*: %d, sqlcipher_*: %d, other: %d; e.g. %s is bound to %s)%s",
                 audit.foreign, audit.checked, audit.foreign_family[SCB_FAMILY_SQLITE3],
                 audit.foreign_family[SCB_FAMILY_SQLCIPHER], audit.foreign_family[SCB_FAMILY_OTHER],
                 audit.first_symbol, audit.first_object,
                 was_present ? "; the library was already loaded in this process without isolation"
                             : "");
        dlclose(handle);
        return -1;
    }

    int exit_mode = scb_exit_prepare(handle, was_present);
    if (scb_prove_identity(&api, r) != 0) {
        dlclose(handle);
        return -1;
    }

    scb_fn = api;
    scb_handle = handle;
    scb_fork_guard_install(handle);
    scb_method = method;
    scb_was_present = was_present;
    scb_checked = audit.checked;
    memcpy(scb_checked_family, audit.checked_family, sizeof scb_checked_family);
    scb_audit_available = audit.supported;
    scb_exit_mode_found = exit_mode;
    snprintf(scb_path, sizeof scb_path, "%s", real);
    atomic_store_explicit(&scb_loaded, 1, memory_order_release);
    return 0;
}

#if defined(__linux__)
/*
** Guarantees: returns -1 with `why` filled only when `real` is an ELF object of this process's
** class whose program headers, or one of whose PT_LOAD segments, reach past the end of the file;
** 0 otherwise, including for anything that is not such an ELF object (dlopen refuses those itself
** with an error). Maps nothing.
**
** Why it matters: glibc's dlopen maps each segment by its header without comparing it with the
** file's size, and the first touch of a page past the end raises SIGBUS inside dlopen (measured:
** libsqlcipher.so.1 cut to 5,000 or 1,400,000 of its 1,492,664 bytes kills the process). A cut
** file is what an interrupted copy, download or install leaves.
*/
static int scb_elf_truncated(const char *real, char *why, size_t len) {
    /* O_NONBLOCK: were the path swapped for a FIFO after the caller's stat, open must not wait. */
    int fd = open(real, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return 0;
    struct stat st;
    ElfW(Ehdr) eh;
    int result = 0;
    /* The class from ElfW's width: musl has no __ELF_NATIVE_CLASS. */
    int native_class = sizeof(ElfW(Addr)) == 8 ? ELFCLASS64 : ELFCLASS32;
    if (fstat(fd, &st) != 0 || pread(fd, &eh, sizeof eh, 0) != (ssize_t)sizeof eh ||
        memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != native_class ||
        eh.e_phentsize != sizeof(ElfW(Phdr))) {
        close(fd);
        return 0;
    }
    unsigned long long size = (unsigned long long)st.st_size;
    unsigned long long need = (unsigned long long)eh.e_phoff + (unsigned long long)eh.e_phnum * eh.e_phentsize;
    for (ElfW(Half) i = 0; need <= size && i < eh.e_phnum; i++) {
        ElfW(Phdr) ph;
        if (pread(fd, &ph, sizeof ph, (off_t)(eh.e_phoff + (ElfW(Off))i * sizeof ph)) != (ssize_t)sizeof ph) {
            need = size + 1;
            break;
        }
        unsigned long long end = (unsigned long long)ph.p_offset + (unsigned long long)ph.p_filesz;
        if (ph.p_type == PT_LOAD && end > need) need = end;
    }
    if (need > size) {
        snprintf(why, len,
                 "the file is cut short: its ELF headers describe at least %llu bytes but it has %llu "
                 "(an interrupted copy, download or install), and loading it would crash the process "
                 "with SIGBUS; reinstall the package or copy the library again",
                 need, size);
        result = -1;
    }
    close(fd);
    return result;
}
#endif

/* Steps 3 to 7 of the sequence for an absolute path; on success the handle stays open. */
static int scb_load_locked(const char *real, scb_load_report *r) {
    const char *method;
    int flags = scb_isolating_flags(&method);
    void *existing = dlopen(real, RTLD_LAZY | RTLD_NOLOAD);
    int was_present = existing != NULL;
    if (existing) dlclose(existing);
#if defined(__linux__)
    if (scb_elf_truncated(real, r->message, sizeof r->message) != 0) {
        r->status = SCB_LOAD_OPEN_FAILED;
        return -1;
    }
#endif

    dlerror();
    void *handle = dlopen(real, flags);
    if (handle == NULL) {
        const char *why = dlerror();
        scb_fail(r, SCB_LOAD_OPEN_FAILED, "dlopen refused %s: %s", real, why ? why : "unknown error");
        return -1;
    }
    return scb_prove_and_publish(handle, real, method, was_present, r);
}

/*
** Guarantees: writes to `real` (PATH_MAX bytes) the absolute, symlink-free path of the file that
** `handle` was loaded from and returns 0; returns -1 when the dynamic linker does not say.
*/
static int scb_handle_path(void *handle, char *real) {
    const char *name = NULL;
#if defined(__linux__)
    struct link_map *map = NULL;
    if (dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map != NULL) name = map->l_name;
#else
    Dl_info info;
    void *symbol = dlsym(handle, "sqlite3_libversion");
    if (symbol != NULL && dladdr(symbol, &info) && info.dli_fname != NULL) name = info.dli_fname;
#endif
    if (name == NULL || name[0] != '/') return -1;
    return realpath(name, real) == NULL ? -1 : 0;
}

/*
** The sequence for a bare file name (no '/'), e.g. "libsqlcipher.so.0". Guarantees: the name is
** looked up exactly as dlopen looks up bare names (LD_LIBRARY_PATH, the caller's RUNPATH,
** /etc/ld.so.cache, the default folders), because dlopen itself does the lookup; the current
** directory is used only when the dynamic linker's own search path names it. The loaded file's
** real path is recorded, as for a path. Called with the lock held.
*/
static int scb_load_name_locked(const char *name, scb_load_report *r) {
    char real[PATH_MAX];
    if (atomic_load_explicit(&scb_loaded, memory_order_acquire)) {
        /* NOLOAD runs the same lookup and answers the object already loaded from that file, if any. */
        void *present = dlopen(name, RTLD_LAZY | RTLD_NOLOAD);
        int same = present != NULL && scb_handle_path(present, real) == 0 && strcmp(real, scb_path) == 0;
        if (present) dlclose(present);
        snprintf(r->object, sizeof r->object, "%s", scb_path);
        if (same) {
            r->audit_checked = scb_checked;
        } else {
            scb_fail(r, SCB_LOAD_ALREADY_LOADED_OTHER,
                     "this process already uses %s; a second SQLCipher library (%s) cannot be loaded",
                     scb_path, name);
        }
        return r->status;
    }

    const char *method;
    int flags = scb_isolating_flags(&method);
    void *existing = dlopen(name, RTLD_LAZY | RTLD_NOLOAD);
    int was_present = existing != NULL;
    if (existing) dlclose(existing);

    dlerror();
    void *handle = dlopen(name, flags);
    if (handle == NULL) {
        const char *why = dlerror();
        int missing = why != NULL && strstr(why, "No such file") != NULL;
        scb_fail(r, missing ? SCB_LOAD_NOT_FOUND : SCB_LOAD_OPEN_FAILED,
                 "dlopen found no usable %s on the library search path: %s", name, why ? why : "unknown error");
        return r->status;
    }
    if (scb_handle_path(handle, real) != 0) {
        dlclose(handle);
        scb_fail(r, SCB_LOAD_OPEN_FAILED, "the dynamic linker loaded %s but does not say from which file%s",
                 name, NULL);
        return r->status;
    }
    if (scb_prove_and_publish(handle, real, method, was_present, r) == 0) {
        snprintf(r->object, sizeof r->object, "%s", real);
    }
    return r->status;
}

int scb_load(const char *path, scb_load_report *report) {
    scb_load_report scratch;
    scb_load_report *r = report ? report : &scratch;
    memset(r, 0, sizeof *r);
    r->status = SCB_LOAD_OK;
    if (path == NULL || path[0] == 0) {
        scb_fail(r, SCB_LOAD_NOT_FOUND, "no library path was given%s%s", NULL, NULL);
        return r->status;
    }
    /* First, before any dlopen: nothing may be loaded into a process that cannot run it. The
    ** Swift layer recognizes this cause by its status and gives the build advice. */
    if (scb_static_c_library()) {
        scb_fail(r, SCB_LOAD_STATIC_EXECUTABLE,
                 "this program is a fully static executable (its C library is linked in statically, "
                 "e.g. built with -static-executable or -static), and a libsqlcipher loaded into it "
                 "would run its own libc and libcrypto uninitialised and crash at the first "
                 "encrypted read%s%s",
                 NULL, NULL);
        return r->status;
    }

    /* A name without '/' is dlopen's to look up, never a file of the current directory. */
    if (strchr(path, '/') == NULL) {
        pthread_mutex_lock(&scb_lock);
#if defined(RTLD_DEEPBIND) && !defined(__APPLE__)
        const char *sanitizer = atomic_load_explicit(&scb_loaded, memory_order_acquire) ? NULL
                                                                                      : scb_sanitizer_runtime();
        if (sanitizer != NULL) {
            scb_fail(r, SCB_LOAD_UNSUPPORTED_RUNTIME,
                     "%s is active in this process and aborts on the RTLD_DEEPBIND load that isolates "
                     "SQLCipher from other SQLite copies%s",
                     sanitizer, NULL);
            pthread_mutex_unlock(&scb_lock);
            return r->status;
        }
#endif
        scb_load_name_locked(path, r);
        pthread_mutex_unlock(&scb_lock);
        return r->status;
    }

    char real[PATH_MAX];
    struct stat st;
    if (realpath(path, real) == NULL || stat(real, &st) != 0) {
        int err = errno;
        scb_fail(r, SCB_LOAD_NOT_FOUND, "%s: %s", path, strerror(err));
        return r->status;
    }
    if (!S_ISREG(st.st_mode)) {
        scb_fail(r, SCB_LOAD_OPEN_FAILED, "%s is not a regular file%s", real, NULL);
        return r->status;
    }

    pthread_mutex_lock(&scb_lock);
    if (atomic_load_explicit(&scb_loaded, memory_order_acquire)) {
        if (strcmp(real, scb_path) != 0) {
            snprintf(r->object, sizeof r->object, "%s", scb_path);
            scb_fail(r, SCB_LOAD_ALREADY_LOADED_OTHER,
                     "this process already uses %s; a second SQLCipher library (%s) cannot be loaded",
                     scb_path, real);
        } else {
            r->audit_checked = scb_checked;
            memcpy(r->audit_checked_family, scb_checked_family, sizeof r->audit_checked_family);
            snprintf(r->object, sizeof r->object, "%s", scb_path);
        }
        pthread_mutex_unlock(&scb_lock);
        return r->status;
    }

#if defined(RTLD_DEEPBIND) && !defined(__APPLE__)
    const char *sanitizer = scb_sanitizer_runtime();
    if (sanitizer != NULL) {
        /* The Swift layer recognizes this cause by "sanitizer runtime" and the runtime's name. */
        scb_fail(r, SCB_LOAD_UNSUPPORTED_RUNTIME,
                 "a sanitizer runtime (%s) is in this process, and its interceptors abort the process "
                 "on the RTLD_DEEPBIND load that isolates SQLCipher from other SQLite copies%s",
                 sanitizer, NULL);
        pthread_mutex_unlock(&scb_lock);
        return r->status;
    }
#endif

    if (scb_load_locked(real, r) == 0) {
        snprintf(r->object, sizeof r->object, "%s", real);
    }
    pthread_mutex_unlock(&scb_lock);
    return r->status;
}

int scb_is_loaded(void) { return atomic_load_explicit(&scb_loaded, memory_order_acquire); }

#define SCB_IF_LOADED(expr, otherwise) (scb_is_loaded() ? (expr) : (otherwise))

const char *scb_library_path(void) { return SCB_IF_LOADED(scb_path, NULL); }
const char *scb_load_method(void) { return SCB_IF_LOADED(scb_method, NULL); }
int scb_library_was_already_loaded(void) { return SCB_IF_LOADED(scb_was_present, 0); }
int scb_exit_protection(void) { return SCB_IF_LOADED(scb_exit_mode_found, 0); }
const char *scb_sqlite_version(void) { return SCB_IF_LOADED(scb_fn.libversion(), NULL); }
int scb_sqlite_version_number(void) { return SCB_IF_LOADED(scb_fn.libversion_number(), 0); }
const char *scb_sqlite_source_id(void) { return SCB_IF_LOADED(scb_fn.sourceid(), NULL); }
const char *scb_cipher_version(void) { return SCB_IF_LOADED(scb_cipher, NULL); }
const char *scb_cipher_provider(void) { return SCB_IF_LOADED(scb_provider, NULL); }
const char *scb_cipher_provider_version(void) { return SCB_IF_LOADED(scb_provider_version, NULL); }
int scb_audit_checked(void) { return SCB_IF_LOADED(scb_checked, 0); }
int scb_audit_supported(void) { return SCB_IF_LOADED(scb_audit_available, 0); }
int scb_audit_checked_family(int family) {
    if (family < 0 || family >= SCB_FAMILY_COUNT) return 0;
    return SCB_IF_LOADED(scb_checked_family[family], 0);
}

int scb_has_function(int which) {
    if (!scb_is_loaded()) return 0;
    switch (which) {
    case SCB_OPT_PREPARE_V3: return scb_fn.prepare_v3 != NULL;
    case SCB_OPT_EXPANDED_SQL: return scb_fn.expanded_sql != NULL;
    case SCB_OPT_KEY_V2: return scb_fn.key_v2 != NULL;
    case SCB_OPT_REKEY_V2: return scb_fn.rekey_v2 != NULL;
    case SCB_OPT_DB_CACHEFLUSH: return scb_fn.db_cacheflush != NULL;
    default: return 0;
    }
}

void *scb_library_function(const char *name) {
    if (!scb_is_loaded() || name == NULL) return NULL;
    void *fn = dlsym(scb_handle, name);
    char owner[16];
    if (fn && !scb_address_in_library(scb_handle, fn, owner, sizeof owner)) return NULL;
    return fn;
}

/* Guarantees: the proven library's handle once scb_load has succeeded (kept open for the
** process's life), NULL before. */
void *scb_library_handle(void) { return scb_is_loaded() ? scb_handle : NULL; }
