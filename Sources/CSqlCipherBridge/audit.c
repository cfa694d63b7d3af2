/*
** Binding audit and process scan.
**
** On Linux a shared library's references to its own exported functions go through relocation
** slots (GOT, PLT and data tables such as SQLite's sqlite3Apis) that the dynamic linker fills
** from the global scope first. In a process that also has libsqlite3, those slots can point into
** libsqlite3 and SQLCipher then runs half on plaintext SQLite code. This file reads the loaded
** library's relocations and checks each such slot against the library's own definition: every
** slot whose symbol the library itself defines, whatever its name. libsqlcipher calls its own
** sqlcipher_* functions and a few others (sqlcipherCodecAttach, sqlite3pager_*) through slots too,
** and a foreign definition of any of them would run inside SQLCipher's codec.
*/
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include "bridge_internal.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(__linux__) && (defined(__x86_64__) || defined(__aarch64__))
#define SCB_HAVE_ELF_AUDIT 1
#include <elf.h>
#include <link.h>
#else
#define SCB_HAVE_ELF_AUDIT 0
#endif

static void scb_copy(char *dst, size_t len, const char *src) {
    if (len == 0) return;
    snprintf(dst, len, "%s", src ? src : "");
}

#if SCB_HAVE_ELF_AUDIT

/* Relocation types whose slot receives S + A (symbol address plus addend). */
static int scb_is_symbol_slot(unsigned long type) {
#if defined(__x86_64__)
    return type == R_X86_64_64 || type == R_X86_64_GLOB_DAT || type == R_X86_64_JUMP_SLOT;
#else
    return type == R_AARCH64_ABS64 || type == R_AARCH64_GLOB_DAT || type == R_AARCH64_JUMP_SLOT;
#endif
}

/*
** glibc relocates the address-valued entries of a writable dynamic section in place; where the
** section is read-only they stay file-relative. An address below the load base is file-relative.
*/
static ElfW(Addr) scb_dyn_address(ElfW(Addr) base, ElfW(Addr) value) {
    return value < base ? value + base : value;
}

/* The family a symbol name belongs to, for the per-family counts. */
static int scb_family_of(const char *name) {
    if (strncmp(name, "sqlite3_", 8) == 0) return SCB_FAMILY_SQLITE3;
    if (strncmp(name, "sqlcipher_", 10) == 0) return SCB_FAMILY_SQLCIPHER;
    return SCB_FAMILY_OTHER;
}

static struct link_map *scb_object_at(const void *address, Dl_info *info);

/* Whether the relocation type is a PLT slot, the only kind the dynamic linker may fill lazily. */
static int scb_is_plt_slot(unsigned long type) {
#if defined(__x86_64__)
    return type == R_X86_64_JUMP_SLOT;
#else
    return type == R_AARCH64_JUMP_SLOT;
#endif
}

/*
** Checks one RELA table; updates `out`.
**
** A PLT slot that differs from the definition but still points into the library itself (`own`)
** has not been filled yet: the library is not linked with -z now and came into the process before
** SqlCipherKit's RTLD_NOW dlopen (linked by the program, LD_PRELOAD), and a dlopen of an object
** already loaded binds nothing. The dynamic linker fills such a slot at its first call with the
** first definition in the global scope (then the library's own scope), which is what
** dlsym(RTLD_DEFAULT) answers now. When that is the library's own definition the slot will bind
** locally: objects loaded later join the global scope after it and cannot come first. When it is
** another object's, the slot counts as foreign and names that object. When the global scope has
** no definition (the library was opened RTLD_LOCAL by someone else) nothing is proven, since a
** later RTLD_GLOBAL load of another SQLite would come first: `unbound` counts those, and a slot
** bound elsewhere is named in preference to an unbound one.
*/
static void scb_audit_rela(ElfW(Addr) base, const ElfW(Rela) *rela, size_t count,
                           const ElfW(Sym) *symtab, const char *strtab, const struct link_map *own,
                           scb_audit_result *out) {
    for (size_t i = 0; i < count; i++) {
        unsigned long type = ELF64_R_TYPE(rela[i].r_info);
        unsigned long index = ELF64_R_SYM(rela[i].r_info);
        if (index == 0 || !scb_is_symbol_slot(type)) continue;
        const ElfW(Sym) *sym = &symtab[index];
        if (sym->st_shndx == SHN_UNDEF || sym->st_value == 0) continue;
        int kind = ELF64_ST_TYPE(sym->st_info);
        if (kind == STT_GNU_IFUNC || kind == STT_TLS) continue;
        const char *name = strtab + sym->st_name;
        int family = scb_family_of(name);

        ElfW(Addr) expected = base + sym->st_value + (ElfW(Addr))rela[i].r_addend;
        ElfW(Addr) actual = *(const ElfW(Addr) *)(base + rela[i].r_offset);
        out->checked++;
        out->checked_family[family]++;
        if (actual == expected) continue;
        Dl_info info;
        memset(&info, 0, sizeof info);
        const struct link_map *owner = scb_object_at((const void *)actual, &info);
        int elsewhere = owner == NULL || owner != own;
        if (!elsewhere && scb_is_plt_slot(type)) {
            /* Not filled yet: where will the first call bind it? */
            void *first = dlsym(RTLD_DEFAULT, name);
            if (first == (void *)expected) {
                out->lazy_local++;
                continue;
            }
            if (first != NULL) {
                memset(&info, 0, sizeof info);
                owner = scb_object_at(first, &info);
                elsewhere = 1;
            }
        }
        out->foreign_family[family]++;
        if (!elsewhere) out->unbound++;
        if (out->foreign++ == 0 || (elsewhere && !out->first_is_elsewhere)) {
            out->first_is_elsewhere = elsewhere;
            scb_copy(out->first_symbol, sizeof out->first_symbol, name);
            if (info.dli_fname) {
                scb_copy(out->first_object, sizeof out->first_object, info.dli_fname);
            } else {
                scb_copy(out->first_object, sizeof out->first_object, "(an address in no loaded object)");
            }
        }
    }
}

/*
** Guarantees: on return 0, `out->checked` counts every symbol-valued RELA slot (data and PLT)
** that refers to a symbol defined by the library itself (any name; thread-local and IFUNC symbols
** excepted, whose slots never hold the definition's address), `out->foreign` counts those whose
** value differs from the library's own definition, and the *_family arrays split both counts by
** name: sqlite3_*, sqlcipher_*, other. Reads only; changes nothing.
*/
int scb_audit_library(void *handle, scb_audit_result *out) {
    memset(out, 0, sizeof *out);
    out->supported = 1;
    struct link_map *map = NULL;
    if (dlinfo(handle, RTLD_DI_LINKMAP, &map) != 0 || map == NULL || map->l_ld == NULL) {
        scb_copy(out->error, sizeof out->error, "dlinfo(RTLD_DI_LINKMAP) failed");
        return -1;
    }
    ElfW(Addr) base = map->l_addr;
    const ElfW(Sym) *symtab = NULL;
    const char *strtab = NULL;
    const ElfW(Rela) *rela = NULL, *jmprel = NULL;
    size_t rela_size = 0, rela_ent = sizeof(ElfW(Rela)), jmprel_size = 0;
    long pltrel_kind = DT_RELA;
    for (const ElfW(Dyn) *d = map->l_ld; d->d_tag != DT_NULL; d++) {
        switch (d->d_tag) {
        case DT_SYMTAB: symtab = (const ElfW(Sym) *)scb_dyn_address(base, d->d_un.d_ptr); break;
        case DT_STRTAB: strtab = (const char *)scb_dyn_address(base, d->d_un.d_ptr); break;
        case DT_RELA: rela = (const ElfW(Rela) *)scb_dyn_address(base, d->d_un.d_ptr); break;
        case DT_RELASZ: rela_size = d->d_un.d_val; break;
        case DT_RELAENT: rela_ent = d->d_un.d_val; break;
        case DT_JMPREL: jmprel = (const ElfW(Rela) *)scb_dyn_address(base, d->d_un.d_ptr); break;
        case DT_PLTRELSZ: jmprel_size = d->d_un.d_val; break;
        case DT_PLTREL: pltrel_kind = (long)d->d_un.d_val; break;
        default: break;
        }
    }
    if (symtab == NULL || strtab == NULL || rela_ent != sizeof(ElfW(Rela))) {
        scb_copy(out->error, sizeof out->error, "the library's dynamic section has no symbol table or RELA entries");
        return -1;
    }
    if (pltrel_kind != DT_RELA && jmprel != NULL) {
        scb_copy(out->error, sizeof out->error, "the library uses REL relocations, which the audit does not read");
        return -1;
    }
    if (rela) scb_audit_rela(base, rela, rela_size / sizeof(ElfW(Rela)), symtab, strtab, map, out);
    if (jmprel) scb_audit_rela(base, jmprel, jmprel_size / sizeof(ElfW(Rela)), symtab, strtab, map, out);
    return 0;
}

/*
** The link map of the loaded object that contains `address`, or NULL; fills `info` as dladdr does.
** glibc answers directly (dladdr1). musl has no dladdr1: there the object is the one whose load
** base equals the base dladdr reports, found by walking the link map chain.
*/
static struct link_map *scb_object_at(const void *address, Dl_info *info) {
#if defined(__GLIBC__)
    struct link_map *map = NULL;
    if (!dladdr1(address, info, (void **)&map, RTLD_DL_LINKMAP)) return NULL;
    return map;
#else
    struct link_map *map = NULL;
    if (!dladdr(address, info) || info->dli_fbase == NULL) return NULL;
    void *self = dlopen(NULL, RTLD_LAZY);
    if (self == NULL || dlinfo(self, RTLD_DI_LINKMAP, &map) != 0) return NULL;
    while (map != NULL && map->l_prev != NULL) map = map->l_prev;
    for (; map != NULL; map = map->l_next) {
        if ((const void *)map->l_addr == info->dli_fbase) return map;
    }
    return NULL;
#endif
}

/* Guarantees: nonzero only when `address` lies inside the very object `handle` names. */
int scb_address_in_library(void *handle, const void *address, char *owner, size_t owner_len) {
    struct link_map *mine = NULL, *theirs = NULL;
    Dl_info info;
    if (owner_len) owner[0] = 0;
    if (dlinfo(handle, RTLD_DI_LINKMAP, &mine) != 0) return 0;
    if ((theirs = scb_object_at(address, &info)) == NULL) {
        scb_copy(owner, owner_len, "(no loaded object)");
        return 0;
    }
    scb_copy(owner, owner_len, info.dli_fname);
    return theirs == mine;
}

/* One loaded object, copied out of dl_iterate_phdr. */
struct scb_object {
    char name[1024];
    ElfW(Addr) base;
};

struct scb_object_list {
    struct scb_object *items;
    size_t count;
    size_t capacity;
};

/*
** dl_iterate_phdr callback: only copies each object's name and base. Nothing that may take the
** dynamic linker's load lock (dlopen, dlsym) runs here: dl_iterate_phdr holds glibc's
** dl_load_write_lock, and a dlopen in another thread takes the load lock and then that one, so
** calling dlopen inside the callback could deadlock against it.
*/
static int scb_collect_object(struct dl_phdr_info *info, size_t size, void *ctx) {
    (void)size;
    struct scb_object_list *list = ctx;
    if (list->count == list->capacity) {
        size_t capacity = list->capacity ? list->capacity * 2 : 64;
        struct scb_object *items = realloc(list->items, capacity * sizeof *items);
        if (items == NULL) return 1;
        list->items = items;
        list->capacity = capacity;
    }
    struct scb_object *object = &list->items[list->count++];
    scb_copy(object->name, sizeof object->name, info->dlpi_name);
    object->base = info->dlpi_addr;
    return 0;
}

/* Whether `object` itself defines sqlite3_libversion; if so returns that function. */
static const char *(*scb_own_libversion(struct scb_object *object, struct link_map *skip))(void) {
    char exe[1024];
    const char *name = object->name;
    void *handle;
    if (name[0] == 0) {
        /* The main program: look it up through the global scope. */
        ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
        if (n <= 0) return NULL;
        exe[n] = 0;
        scb_copy(object->name, sizeof object->name, exe);
        handle = dlopen(NULL, RTLD_LAZY);
    } else {
        handle = dlopen(name, RTLD_LAZY | RTLD_NOLOAD);
    }
    if (handle == NULL) return NULL;
    void *fn = dlsym(handle, "sqlite3_libversion");
    struct link_map *owner = NULL;
    Dl_info where;
    /* dlsym also searches the object's dependencies: count the object only when the definition
    ** found lies in the object itself. */
    int defines = fn && (owner = scb_object_at(fn, &where)) != NULL &&
                  owner->l_addr == object->base && owner != skip;
    dlclose(handle);
    return defines ? (const char *(*)(void))fn : NULL;
}

int scb_other_sqlite_library(int index, char *path, size_t path_len, char *version, size_t version_len) {
    struct link_map *skip = NULL;
    if (atomic_load_explicit(&scb_loaded, memory_order_acquire)) {
        void *own = dlopen(scb_library_path(), RTLD_LAZY | RTLD_NOLOAD);
        if (own) {
            dlinfo(own, RTLD_DI_LINKMAP, &skip);
            dlclose(own);
        }
    }
    struct scb_object_list list = {NULL, 0, 0};
    dl_iterate_phdr(scb_collect_object, &list);
    int seen = 0, found = 0;
    for (size_t i = 0; i < list.count && !found; i++) {
        const char *(*libversion)(void) = scb_own_libversion(&list.items[i], skip);
        if (libversion == NULL || seen++ != index) continue;
        scb_copy(path, path_len, list.items[i].name);
        scb_copy(version, version_len, libversion());
        found = 1;
    }
    free(list.items);
    return found;
}

#else /* no ELF audit on this platform */

int scb_audit_library(void *handle, scb_audit_result *out) {
    (void)handle;
    memset(out, 0, sizeof *out);
    out->supported = 0;
    return 0;
}

int scb_address_in_library(void *handle, const void *address, char *owner, size_t owner_len) {
    Dl_info info;
    Dl_info lib;
    void *probe = dlsym(handle, "sqlite3_libversion");
    if (owner_len) owner[0] = 0;
    if (!dladdr(address, &info) || !probe || !dladdr(probe, &lib)) return 0;
    scb_copy(owner, owner_len, info.dli_fname);
    return info.dli_fbase == lib.dli_fbase;
}

int scb_other_sqlite_library(int index, char *path, size_t path_len, char *version, size_t version_len) {
    (void)index; (void)path; (void)path_len; (void)version; (void)version_len;
    return 0;
}

#endif
