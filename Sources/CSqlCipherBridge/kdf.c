/*
** Key derivation through the crypto library that the loaded SQLCipher itself uses.
**
** A connection keyed with a passphrase runs PBKDF2 when it first reads a page (about 180 ms with
** SQLCipher 4's defaults). A pool of connections on one file can derive the key once and key each
** connection with SQLCipher's raw key and salt instead; for that the derivation must be exactly
** the one SQLCipher runs. So this file never links a crypto library and never loads one: it finds
** the one the proven libsqlcipher already depends on, in this sequence (scb_kdf_prepare):
**   1. from libsqlcipher's link map (dlinfo RTLD_DI_LINKMAP) read its dynamic section: its
**      DT_NEEDED names and its relocations;
**   2. find libsqlcipher's own import of PKCS5_PBKDF2_HMAC (SQLCipher 4's OpenSSL provider) or
**      PKCS5_PBKDF2_HMAC_SHA1 (SQLCipher 3's); a library built on another provider (NSS,
**      libtomcrypt, CommonCrypto) has neither, and derivation is reported unavailable;
**   3. among the loaded objects (dl_iterate_phdr) take the one whose soname is one of those
**      DT_NEEDED names and that defines that function itself, and dlopen it by its exact path
**      with RTLD_NOLOAD (it is already loaded; nothing new enters the process);
**   4. dlsym PKCS5_PBKDF2_HMAC and EVP_sha1/EVP_sha256/EVP_sha512 from that handle and prove with
**      dladdr that each lies in that object;
**   5. compare every relocation slot of libsqlcipher that imports one of those names with the
**      function found: SQLCipher's own calls go to exactly these functions.
** Only libc's dl* functions are used; OpenSSL's prototypes are declared below as function-pointer
** types, no OpenSSL header is included.
*/
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include "bridge_internal.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#if defined(__linux__) && (defined(__x86_64__) || defined(__aarch64__))
#define SCB_HAVE_KDF_LOOKUP 1
#include <elf.h>
#include <link.h>
#else
#define SCB_HAVE_KDF_LOOKUP 0
#endif

/*
** OpenSSL's functions, as function-pointer types (https://docs.openssl.org/3.0/man3/PKCS5_PBKDF2_HMAC/):
**   int PKCS5_PBKDF2_HMAC(const char *pass, int passlen, const unsigned char *salt, int saltlen,
**                         int iter, const EVP_MD *digest, int keylen, unsigned char *out);
**   int PKCS5_PBKDF2_HMAC_SHA1(const char *pass, int passlen, const unsigned char *salt,
**                              int saltlen, int iter, int keylen, unsigned char *out);
**   const EVP_MD *EVP_sha1(void);   (and EVP_sha256, EVP_sha512)
** Both PBKDF2 functions return 1 on success and 0 on failure.
*/
typedef int (*scb_pbkdf2_fn)(const char *, int, const unsigned char *, int, int, const void *, int, unsigned char *);
typedef int (*scb_pbkdf2_sha1_fn)(const char *, int, const unsigned char *, int, int, int, unsigned char *);
typedef const void *(*scb_digest_fn)(void);

static const char *const scb_digest_names[4] = {NULL, "EVP_sha1", "EVP_sha256", "EVP_sha512"};

static pthread_mutex_t scb_kdf_lock = PTHREAD_MUTEX_INITIALIZER;
static int scb_kdf_done;                 /* under the lock: the outcome below is final */
static int scb_kdf_outcome;              /* an scb_kdf_status */
static char scb_kdf_reason[1024];
static char scb_kdf_path[4096];
static const char *scb_kdf_import = "";
static scb_pbkdf2_fn scb_kdf_fn;
/* Set only when libsqlcipher itself calls PKCS5_PBKDF2_HMAC_SHA1 (SQLCipher 3): SHA-1 then goes
** through the very function SQLCipher calls. */
static scb_pbkdf2_sha1_fn scb_kdf_sha1_fn;
static scb_digest_fn scb_kdf_digests[4];
/* Published with release ordering once every field above is final and the outcome is OK. */
static atomic_int scb_kdf_ready;

/* Guarantees: records `status` as the outcome and the formatted reason (NULL arguments print as ""). */
static void scb_kdf_fail(int status, const char *fmt, const char *a, const char *b) {
    scb_kdf_outcome = status;
    snprintf(scb_kdf_reason, sizeof scb_kdf_reason, fmt, a ? a : "", b ? b : "");
}

#if SCB_HAVE_KDF_LOOKUP

#define SCB_KDF_MAX_NEEDED 64

/* What this file reads from one object's dynamic section. */
typedef struct scb_dynamic {
    ElfW(Addr) base;
    const ElfW(Sym) *symtab;
    const char *strtab;
    const ElfW(Rela) *rela;
    size_t rela_count;
    const ElfW(Rela) *jmprel;
    size_t jmprel_count;
    const char *needed[SCB_KDF_MAX_NEEDED];
    int needed_count;
} scb_dynamic;

/* As in audit.c: glibc relocates the dynamic section's addresses in place only where it is
** writable; a value below the load base is still file-relative. */
static ElfW(Addr) scb_kdf_dyn_address(ElfW(Addr) base, ElfW(Addr) value) {
    return value < base ? value + base : value;
}

/*
** Guarantees: returns 0 with `out` describing the object `map` (symbol and string tables, RELA
** relocations, DT_NEEDED names pointing into its string table); -1 when the section lacks them
** or uses REL relocations. Reads only.
*/
static int scb_kdf_read_dynamic(const struct link_map *map, scb_dynamic *out) {
    memset(out, 0, sizeof *out);
    if (map == NULL || map->l_ld == NULL) return -1;
    ElfW(Addr) base = map->l_addr;
    size_t rela_size = 0, jmprel_size = 0, rela_ent = sizeof(ElfW(Rela));
    long pltrel_kind = DT_RELA;
    ElfW(Xword) needed_offsets[SCB_KDF_MAX_NEEDED];
    int needed = 0;
    out->base = base;
    for (const ElfW(Dyn) *d = map->l_ld; d->d_tag != DT_NULL; d++) {
        switch (d->d_tag) {
        case DT_SYMTAB: out->symtab = (const ElfW(Sym) *)scb_kdf_dyn_address(base, d->d_un.d_ptr); break;
        case DT_STRTAB: out->strtab = (const char *)scb_kdf_dyn_address(base, d->d_un.d_ptr); break;
        case DT_RELA: out->rela = (const ElfW(Rela) *)scb_kdf_dyn_address(base, d->d_un.d_ptr); break;
        case DT_RELASZ: rela_size = d->d_un.d_val; break;
        case DT_RELAENT: rela_ent = d->d_un.d_val; break;
        case DT_JMPREL: out->jmprel = (const ElfW(Rela) *)scb_kdf_dyn_address(base, d->d_un.d_ptr); break;
        case DT_PLTRELSZ: jmprel_size = d->d_un.d_val; break;
        case DT_PLTREL: pltrel_kind = (long)d->d_un.d_val; break;
        case DT_NEEDED:
            if (needed < SCB_KDF_MAX_NEEDED) needed_offsets[needed++] = d->d_un.d_val;
            break;
        default: break;
        }
    }
    if (out->symtab == NULL || out->strtab == NULL || rela_ent != sizeof(ElfW(Rela))) return -1;
    if (out->jmprel != NULL && pltrel_kind != DT_RELA) return -1;
    out->rela_count = out->rela ? rela_size / sizeof(ElfW(Rela)) : 0;
    out->jmprel_count = out->jmprel ? jmprel_size / sizeof(ElfW(Rela)) : 0;
    for (int i = 0; i < needed; i++) out->needed[i] = out->strtab + needed_offsets[i];
    out->needed_count = needed;
    return 0;
}

/* Guarantees: nonzero for the relocation types whose slot receives a symbol's address (S + A). */
static int scb_kdf_is_symbol_slot(unsigned long type) {
#if defined(__x86_64__)
    return type == R_X86_64_64 || type == R_X86_64_GLOB_DAT || type == R_X86_64_JUMP_SLOT;
#else
    return type == R_AARCH64_ABS64 || type == R_AARCH64_GLOB_DAT || type == R_AARCH64_JUMP_SLOT;
#endif
}

/* Guarantees: nonzero for the types among those whose slot holds S + A with A significant (data
** words); GLOB_DAT and JUMP_SLOT slots hold S itself. */
static int scb_kdf_adds_addend(unsigned long type) {
#if defined(__x86_64__)
    return type == R_X86_64_64;
#else
    return type == R_AARCH64_ABS64;
#endif
}

/* Guarantees: as scb_kdf_import_slot, for one RELA table of `count` entries. */
static int scb_kdf_find_slot(const scb_dynamic *d, const ElfW(Rela) *rela, size_t count, const char *name,
                             ElfW(Addr) *target) {
    for (size_t i = 0; i < count; i++) {
        unsigned long type = ELF64_R_TYPE(rela[i].r_info);
        unsigned long index = ELF64_R_SYM(rela[i].r_info);
        if (index == 0 || !scb_kdf_is_symbol_slot(type)) continue;
        const ElfW(Sym) *sym = &d->symtab[index];
        if (sym->st_shndx != SHN_UNDEF || strcmp(d->strtab + sym->st_name, name) != 0) continue;
        ElfW(Addr) slot = *(const ElfW(Addr) *)(d->base + rela[i].r_offset);
        *target = scb_kdf_adds_addend(type) ? slot - (ElfW(Addr))rela[i].r_addend : slot;
        return 1;
    }
    return 0;
}

/*
** Guarantees: returns 1 and the address a relocation slot of the object holds for the undefined
** symbol `name` (the definition the dynamic linker bound the object's own use of it to, all
** slots being filled at load under RTLD_NOW / BIND_NOW); 0 when the object does not import it.
*/
static int scb_kdf_import_slot(const scb_dynamic *d, const char *name, ElfW(Addr) *target) {
    return scb_kdf_find_slot(d, d->jmprel, d->jmprel_count, name, target) ||
           scb_kdf_find_slot(d, d->rela, d->rela_count, name, target);
}

/* One loaded object as dl_iterate_phdr reports it: its path and its DT_SONAME, copied out. */
typedef struct scb_kdf_object {
    char path[1024];
    char soname[256];
} scb_kdf_object;

typedef struct scb_kdf_objects {
    scb_kdf_object items[256];
    size_t count;
} scb_kdf_objects;

/*
** dl_iterate_phdr callback. Guarantees: copies each loaded object's path and soname and calls
** nothing of the dynamic linker: dl_iterate_phdr holds its lock, which a dlopen or dlclose in
** another thread also takes, so the list cannot change under the walk (following l_next by hand
** could), and a dl* call here could deadlock (audit.c says the same).
*/
static int scb_kdf_collect(struct dl_phdr_info *info, size_t size, void *ctx) {
    (void)size;
    scb_kdf_objects *list = ctx;
    if (list->count == sizeof list->items / sizeof list->items[0]) return 1;
    if (info->dlpi_name == NULL || info->dlpi_name[0] != '/') return 0;
    const ElfW(Dyn) *dynamic = NULL;
    for (ElfW(Half) i = 0; i < info->dlpi_phnum; i++) {
        if (info->dlpi_phdr[i].p_type == PT_DYNAMIC) {
            dynamic = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
        }
    }
    if (dynamic == NULL) return 0;
    const char *strtab = NULL;
    ElfW(Xword) soname = 0;
    int has_soname = 0;
    for (const ElfW(Dyn) *d = dynamic; d->d_tag != DT_NULL; d++) {
        if (d->d_tag == DT_STRTAB) strtab = (const char *)scb_kdf_dyn_address(info->dlpi_addr, d->d_un.d_ptr);
        if (d->d_tag == DT_SONAME) { soname = d->d_un.d_val; has_soname = 1; }
    }
    scb_kdf_object *object = &list->items[list->count++];
    snprintf(object->path, sizeof object->path, "%s", info->dlpi_name);
    snprintf(object->soname, sizeof object->soname, "%s", has_soname && strtab ? strtab + soname : "");
    return 0;
}

/* Whether `object` is what one of the DT_NEEDED names resolved to: the dynamic linker matches a
** needed name against a loaded object's soname (or, lacking one, the last part of its path). */
static int scb_kdf_is_needed(const scb_dynamic *d, const scb_kdf_object *object) {
    const char *slash = strrchr(object->path, '/');
    const char *file = slash ? slash + 1 : object->path;
    for (int i = 0; i < d->needed_count; i++) {
        if (object->soname[0] ? strcmp(object->soname, d->needed[i]) == 0 : strcmp(file, d->needed[i]) == 0) return 1;
    }
    return 0;
}

/* Guarantees: nonzero only when `address` lies inside the object whose link map is `map`. */
static int scb_kdf_address_in(const struct link_map *map, const void *address, char *owner, size_t owner_len) {
    Dl_info info;
    if (owner_len) owner[0] = 0;
#if defined(__GLIBC__)
    struct link_map *found = NULL;
    if (!dladdr1(address, &info, (void **)&found, RTLD_DL_LINKMAP) || found == NULL) return 0;
    snprintf(owner, owner_len, "%s", info.dli_fname ? info.dli_fname : "");
    return found == map;
#else
    if (!dladdr(address, &info) || info.dli_fname == NULL) return 0;
    snprintf(owner, owner_len, "%s", info.dli_fname);
    return strcmp(info.dli_fname, map->l_name) == 0;
#endif
}

/*
** Guarantees: returns SCB_KDF_OK only with every function resolved from the one dependency of the
** loaded libsqlcipher that defines its PBKDF2 import, each proven to lie in that object, and each
** of libsqlcipher's own slots for these names bound to exactly the function resolved. The crypto
** library's handle stays open (it is a dependency of libsqlcipher, which stays loaded anyway).
*/
static int scb_kdf_find(void) {
    void *library = scb_library_handle();
    struct link_map *map = NULL;
    scb_dynamic dynamic;
    if (library == NULL || dlinfo(library, RTLD_DI_LINKMAP, &map) != 0 || map == NULL ||
        scb_kdf_read_dynamic(map, &dynamic) != 0) {
        scb_kdf_fail(SCB_KDF_UNSUPPORTED_PLATFORM,
                     "the loaded library's link map or dynamic section cannot be read%s%s", NULL, NULL);
        return scb_kdf_outcome;
    }

    /* 2. The PBKDF2 function SQLCipher itself calls. */
    static const char *const imports[] = {"PKCS5_PBKDF2_HMAC", "PKCS5_PBKDF2_HMAC_SHA1"};
    const char *import = NULL;
    ElfW(Addr) bound = 0;
    for (size_t i = 0; i < sizeof imports / sizeof imports[0] && import == NULL; i++) {
        if (scb_kdf_import_slot(&dynamic, imports[i], &bound)) import = imports[i];
    }
    if (import == NULL) {
        scb_kdf_fail(SCB_KDF_NO_CRYPTO_LIBRARY,
                     "the loaded library calls neither PKCS5_PBKDF2_HMAC nor PKCS5_PBKDF2_HMAC_SHA1, so it "
                     "derives keys with a crypto provider other than OpenSSL's libcrypto%s%s", NULL, NULL);
        return scb_kdf_outcome;
    }

    /* 3. The dependency that defines it, opened by its exact path without loading anything. */
    static scb_kdf_objects objects;  /* under scb_kdf_lock; too large for the stack */
    objects.count = 0;
    dl_iterate_phdr(scb_kdf_collect, &objects);
    void *crypto = NULL;
    struct link_map *crypto_map = NULL;
    char owner[1024];
    for (size_t i = 0; i < objects.count && crypto == NULL; i++) {
        if (!scb_kdf_is_needed(&dynamic, &objects.items[i])) continue;
        void *handle = dlopen(objects.items[i].path, RTLD_LAZY | RTLD_NOLOAD);
        if (handle == NULL) continue;
        struct link_map *candidate = NULL;
        void *fn = dlsym(handle, import);
        if (fn != NULL && dlinfo(handle, RTLD_DI_LINKMAP, &candidate) == 0 && candidate != NULL &&
            scb_kdf_address_in(candidate, fn, owner, sizeof owner)) {
            crypto = handle;
            crypto_map = candidate;
        } else {
            dlclose(handle);
        }
    }
    if (crypto == NULL) {
        char needed[512] = "";
        for (int i = 0; i < dynamic.needed_count; i++) {
            size_t used = strlen(needed);
            snprintf(needed + used, sizeof needed - used, "%s%s", i ? ", " : "", dynamic.needed[i]);
        }
        scb_kdf_fail(SCB_KDF_NO_CRYPTO_LIBRARY,
                     "no loaded dependency of the library (DT_NEEDED: %s) defines %s itself", needed, import);
        return scb_kdf_outcome;
    }

    /* 4. Every function the derivation calls, from that object and proven to lie in it. */
    scb_kdf_fn = (scb_pbkdf2_fn)dlsym(crypto, "PKCS5_PBKDF2_HMAC");
    if (scb_kdf_fn == NULL || !scb_kdf_address_in(crypto_map, (const void *)scb_kdf_fn, owner, sizeof owner)) {
        scb_kdf_fail(SCB_KDF_MISSING_SYMBOL, "%s does not define PKCS5_PBKDF2_HMAC itself%s", crypto_map->l_name, NULL);
        return scb_kdf_outcome;
    }
    for (int a = SCB_KDF_PBKDF2_HMAC_SHA1; a <= SCB_KDF_PBKDF2_HMAC_SHA512; a++) {
        scb_kdf_digests[a] = (scb_digest_fn)dlsym(crypto, scb_digest_names[a]);
        if (scb_kdf_digests[a] == NULL ||
            !scb_kdf_address_in(crypto_map, (const void *)scb_kdf_digests[a], owner, sizeof owner)) {
            scb_kdf_fail(SCB_KDF_MISSING_SYMBOL, "%s does not define %s itself", crypto_map->l_name,
                         scb_digest_names[a]);
            return scb_kdf_outcome;
        }
    }
    ElfW(Addr) unused = 0;
    if (scb_kdf_import_slot(&dynamic, "PKCS5_PBKDF2_HMAC_SHA1", &unused)) {
        scb_kdf_sha1_fn = (scb_pbkdf2_sha1_fn)dlsym(crypto, "PKCS5_PBKDF2_HMAC_SHA1");
        if (scb_kdf_sha1_fn == NULL ||
            !scb_kdf_address_in(crypto_map, (const void *)scb_kdf_sha1_fn, owner, sizeof owner)) {
            scb_kdf_fail(SCB_KDF_MISSING_SYMBOL, "%s does not define PKCS5_PBKDF2_HMAC_SHA1 itself%s",
                         crypto_map->l_name, NULL);
            return scb_kdf_outcome;
        }
    }

    /* 5. libsqlcipher's own calls are bound to exactly these functions. */
    const void *resolved[] = {(const void *)scb_kdf_fn, (const void *)scb_kdf_sha1_fn,
                              (const void *)scb_kdf_digests[1], (const void *)scb_kdf_digests[2],
                              (const void *)scb_kdf_digests[3]};
    const char *names[] = {"PKCS5_PBKDF2_HMAC", "PKCS5_PBKDF2_HMAC_SHA1", "EVP_sha1", "EVP_sha256", "EVP_sha512"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        ElfW(Addr) slot = 0;
        if (!scb_kdf_import_slot(&dynamic, names[i], &slot)) continue;
        if (resolved[i] == NULL || slot != (ElfW(Addr))resolved[i]) {
            Dl_info where;
            const char *target = dladdr((const void *)slot, &where) && where.dli_fname ? where.dli_fname
                                                                                        : "an unknown object";
            char detail[1200];
            snprintf(detail, sizeof detail, "%s is bound to a definition in %s", names[i], target);
            scb_kdf_fail(SCB_KDF_BINDING_MISMATCH,
                         "the loaded library's own call to %s, not to the function found in %s", detail,
                         crypto_map->l_name);
            return scb_kdf_outcome;
        }
    }

    scb_kdf_import = import;
    snprintf(scb_kdf_path, sizeof scb_kdf_path, "%s", crypto_map->l_name);
    scb_kdf_outcome = SCB_KDF_OK;
    return scb_kdf_outcome;
}

#endif /* SCB_HAVE_KDF_LOOKUP */

/*
** Guarantees: runs the search (scb_kdf_find) at most once per process, and only after scb_load
** succeeded; every later call returns that outcome. Thread-safe (one lock).
*/
int scb_kdf_prepare(char *message, size_t message_len) {
    pthread_mutex_lock(&scb_kdf_lock);
    int status;
    if (scb_kdf_done) {
        status = scb_kdf_outcome;
    } else if (!scb_is_loaded()) {
        /* Not final: a later call, after scb_load, runs the search. */
        status = SCB_KDF_NOT_LOADED;
        snprintf(scb_kdf_reason, sizeof scb_kdf_reason, "no SQLCipher library is loaded yet");
    } else {
#if SCB_HAVE_KDF_LOOKUP
        status = scb_kdf_find();
#else
        scb_kdf_fail(SCB_KDF_UNSUPPORTED_PLATFORM,
                     "finding the library's crypto library needs an ELF link map (Linux on x86_64 or "
                     "aarch64)%s%s", NULL, NULL);
        status = scb_kdf_outcome;
#endif
        scb_kdf_done = 1;
        if (status == SCB_KDF_OK) atomic_store_explicit(&scb_kdf_ready, 1, memory_order_release);
    }
    if (message != NULL && message_len > 0) {
        snprintf(message, message_len, "%s", status == SCB_KDF_OK ? "" : scb_kdf_reason);
    }
    pthread_mutex_unlock(&scb_kdf_lock);
    return status;
}

/* Guarantees: the crypto library's path once scb_kdf_prepare has succeeded, NULL before. */
const char *scb_kdf_library_path(void) {
    return atomic_load_explicit(&scb_kdf_ready, memory_order_acquire) ? scb_kdf_path : NULL;
}

/* Guarantees: the name of libsqlcipher's own PBKDF2 import that was checked, NULL before success. */
const char *scb_kdf_checked_import(void) {
    return atomic_load_explicit(&scb_kdf_ready, memory_order_acquire) ? scb_kdf_import : NULL;
}

/*
** Guarantees: 1 only when the crypto library found by scb_kdf_prepare wrote `out_len` bytes of
** PBKDF2-HMAC(digest, passphrase, salt, iterations) to `out`; SHA-1 goes through
** PKCS5_PBKDF2_HMAC_SHA1 when that is the function libsqlcipher itself calls. Never reads past
** the given lengths and keeps no copy of them.
*/
int scb_kdf_pbkdf2(int algorithm, const void *passphrase, int passphrase_len, const void *salt, int salt_len,
                   int iterations, void *out, int out_len) {
    if (!atomic_load_explicit(&scb_kdf_ready, memory_order_acquire)) return 0;
    if (algorithm < SCB_KDF_PBKDF2_HMAC_SHA1 || algorithm > SCB_KDF_PBKDF2_HMAC_SHA512) return 0;
    if (passphrase == NULL || passphrase_len <= 0 || salt == NULL || salt_len <= 0 || iterations < 1 ||
        out == NULL || out_len <= 0) {
        return 0;
    }
    scb_exit_slot *slot = scb_gate_enter();  /* a derivation holds libcrypto's digests (exit.c) */
    if (slot == SCB_GATE_REFUSED) return 0;
    int ok;
    if (algorithm == SCB_KDF_PBKDF2_HMAC_SHA1 && scb_kdf_sha1_fn != NULL) {
        ok = scb_kdf_sha1_fn((const char *)passphrase, passphrase_len, (const unsigned char *)salt, salt_len,
                             iterations, out_len, (unsigned char *)out) == 1;
    } else {
        const void *digest = scb_kdf_digests[algorithm]();
        ok = digest != NULL && scb_kdf_fn((const char *)passphrase, passphrase_len, (const unsigned char *)salt,
                                          salt_len, iterations, digest, out_len, (unsigned char *)out) == 1;
    }
    scb_gate_leave(slot);
    return ok;
}

/*
** Guarantees: `len` bytes at `p` are zero when it returns. The compiler may not drop the memset as
** dead even when the buffer is freed right after: the empty assembly statement that follows takes
** `p` and clobbers memory, so as far as the compiler knows the zeros are read (the technique of
** BoringSSL's OPENSSL_cleanse). It is libc's memset, not a loop of volatile byte stores, which
** took tens of seconds for a 2 GiB passphrase in a debug build.
*/
void scb_kdf_zero(void *p, size_t len) {
    if (p == NULL || len == 0) return;
    memset(p, 0, len);
    __asm__ __volatile__("" : : "r"(p) : "memory");
}
