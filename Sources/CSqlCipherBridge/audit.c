/*
** Binding audit and process scan.
**
** On Linux a shared library's references to its own exported functions go through relocation
** slots (GOT, PLT and data tables such as SQLite's sqlite3Apis) that the dynamic linker fills
** from the global scope first. In a process that also has libsqlite3, those slots can point into
** libsqlite3 and SQLCipher then runs half on plaintext SQLite code. This file reads the loaded
** library's relocations and checks each such slot against the library's own definition.
*/
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include "bridge_internal.h"

#include <dlfcn.h>
#include <stdio.h>
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

/* Checks one RELA table; updates `out`. */
static void scb_audit_rela(ElfW(Addr) base, const ElfW(Rela) *rela, size_t count,
                           const ElfW(Sym) *symtab, const char *strtab, scb_audit_result *out) {
    for (size_t i = 0; i < count; i++) {
        unsigned long type = ELF64_R_TYPE(rela[i].r_info);
        unsigned long index = ELF64_R_SYM(rela[i].r_info);
        if (index == 0 || !scb_is_symbol_slot(type)) continue;
        const ElfW(Sym) *sym = &symtab[index];
        if (sym->st_shndx == SHN_UNDEF || sym->st_value == 0) continue;
        int kind = ELF64_ST_TYPE(sym->st_info);
        if (kind == STT_GNU_IFUNC || kind == STT_TLS) continue;
        const char *name = strtab + sym->st_name;
        if (strncmp(name, "sqlite3_", 8) != 0) continue;

        ElfW(Addr) expected = base + sym->st_value + (ElfW(Addr))rela[i].r_addend;
        ElfW(Addr) actual = *(const ElfW(Addr) *)(base + rela[i].r_offset);
        out->checked++;
        if (actual == expected) continue;
        if (out->foreign++ == 0) {
            Dl_info info;
            scb_copy(out->first_symbol, sizeof out->first_symbol, name);
            if (dladdr((void *)actual, &info) && info.dli_fname) {
                scb_copy(out->first_object, sizeof out->first_object, info.dli_fname);
            } else {
                scb_copy(out->first_object, sizeof out->first_object, "(an address in no loaded object)");
            }
        }
    }
}

/*
** Guarantees: on return 0, `out->checked` counts every symbol-valued RELA slot (data and PLT)
** that refers to a sqlite3_* symbol defined by the library, and `out->foreign` counts those
** whose value differs from the library's own definition. Reads only; changes nothing.
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
    if (rela) scb_audit_rela(base, rela, rela_size / sizeof(ElfW(Rela)), symtab, strtab, out);
    if (jmprel) scb_audit_rela(base, jmprel, jmprel_size / sizeof(ElfW(Rela)), symtab, strtab, out);
    return 0;
}

/* Guarantees: nonzero only when `address` lies inside the very object `handle` names. */
int scb_address_in_library(void *handle, const void *address, char *owner, size_t owner_len) {
    struct link_map *mine = NULL, *theirs = NULL;
    Dl_info info;
    if (owner_len) owner[0] = 0;
    if (dlinfo(handle, RTLD_DI_LINKMAP, &mine) != 0) return 0;
    if (!dladdr1(address, &info, (void **)&theirs, RTLD_DL_LINKMAP) || theirs == NULL) {
        scb_copy(owner, owner_len, "(no loaded object)");
        return 0;
    }
    scb_copy(owner, owner_len, info.dli_fname);
    return theirs == mine;
}

struct scb_scan {
    int wanted;
    int seen;
    struct link_map *skip;
    char *path;
    size_t path_len;
    char *version;
    size_t version_len;
    int found;
};

/* dl_iterate_phdr callback: stops at the wanted-th object that defines sqlite3_libversion. */
static int scb_scan_object(struct dl_phdr_info *info, size_t size, void *ctx) {
    (void)size;
    struct scb_scan *scan = ctx;
    const char *name = info->dlpi_name;
    char exe[1024];
    void *object;
    if (name == NULL || name[0] == 0) {
        /* The main program: look it up through the global scope. */
        ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
        if (n <= 0) return 0;
        exe[n] = 0;
        name = exe;
        object = dlopen(NULL, RTLD_LAZY);
    } else {
        object = dlopen(name, RTLD_LAZY | RTLD_NOLOAD);
    }
    if (object == NULL) return 0;
    void *fn = dlsym(object, "sqlite3_libversion");
    struct link_map *owner = NULL;
    Dl_info where;
    int defines = fn && dladdr1(fn, &where, (void **)&owner, RTLD_DL_LINKMAP) && owner != NULL &&
                  owner->l_addr == info->dlpi_addr && owner != scan->skip;
    if (defines && scan->seen++ == scan->wanted) {
        const char *(*libversion)(void) = (const char *(*)(void))fn;
        scb_copy(scan->path, scan->path_len, name);
        scb_copy(scan->version, scan->version_len, libversion());
        scan->found = 1;
    }
    dlclose(object);
    return scan->found;
}

int scb_other_sqlite_library(int index, char *path, size_t path_len, char *version, size_t version_len) {
    struct scb_scan scan = {index, 0, NULL, path, path_len, version, version_len, 0};
    if (atomic_load_explicit(&scb_loaded, memory_order_acquire)) {
        void *own = dlopen(scb_library_path(), RTLD_LAZY | RTLD_NOLOAD);
        if (own) {
            dlinfo(own, RTLD_DI_LINKMAP, &scan.skip);
            dlclose(own);
        }
    }
    dl_iterate_phdr(scb_scan_object, &scan);
    return scan.found;
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
