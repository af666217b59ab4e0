#include "CSQLiteFaults.h"

#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <sqlite3.h>
#include <stdatomic.h>
#include <string.h>

const char *const fh_faults_vfs_name = "feedbackhost-faults";

/// The switched directories: a slot is claimed once and kept; its mode and count change.
#define FH_SLOTS 64
typedef struct {
    char directory[512];
    _Atomic int mode;
    _Atomic long long injected;
} fault_slot;
static fault_slot slots[FH_SLOTS];
static _Atomic int slot_count = 0;
static pthread_mutex_t slots_lock = PTHREAD_MUTEX_INITIALIZER;
static sqlite3_vfs *base_vfs = NULL;
static sqlite3_vfs fault_vfs;

/// A wrapped file: SQLite allocates `szOsFile` bytes; the base VFS's file follows this header.
typedef struct {
    sqlite3_file header;
    /// The slot of the file's directory, or NULL when the file is not watched.
    fault_slot *slot;
    sqlite3_file *base;
} fault_file;

/// The slot of `directory` (its first `length` bytes), claimed when `claim`; NULL when there is none (or no room).
/// Directories are compared by their canonical path, so `/tmp//x` and a symbolic link to it are one.
static fault_slot *slot_for(const char *given, size_t given_length, int claim) {
    char raw[PATH_MAX];
    char canonical[PATH_MAX];
    if (given_length >= sizeof(raw)) return NULL;
    memcpy(raw, given, given_length);
    raw[given_length] = 0;
    const char *directory = realpath(raw, canonical) ? canonical : raw;
    size_t length = strlen(directory);
    if (length >= sizeof(slots[0].directory)) return NULL;
    pthread_mutex_lock(&slots_lock);
    fault_slot *found = NULL;
    int count = atomic_load(&slot_count);
    for (int i = 0; i < count && !found; i++) {
        if (strlen(slots[i].directory) == length && memcmp(slots[i].directory, directory, length) == 0) {
            found = &slots[i];
        }
    }
    if (!found && claim && count < FH_SLOTS) {
        found = &slots[count];
        memcpy(found->directory, directory, length);
        found->directory[length] = 0;
        atomic_store(&slot_count, count + 1);
    }
    pthread_mutex_unlock(&slots_lock);
    return found;
}

static int fault(fault_slot *slot, int failing) {
    atomic_fetch_add(&slot->injected, 1);
    return failing;
}

static int f_close(sqlite3_file *file) {
    fault_file *f = (fault_file *)file;
    int rc = f->base->pMethods ? f->base->pMethods->xClose(f->base) : SQLITE_OK;
    f->header.pMethods = NULL;
    return rc;
}

static int f_read(sqlite3_file *file, void *buffer, int amount, sqlite3_int64 offset) {
    fault_file *f = (fault_file *)file;
    return f->base->pMethods->xRead(f->base, buffer, amount, offset);
}

static int f_write(sqlite3_file *file, const void *buffer, int amount, sqlite3_int64 offset) {
    fault_file *f = (fault_file *)file;
    if (f->slot) {
        int mode = atomic_load(&f->slot->mode);
        if (mode == FH_FAULT_WRITE) return fault(f->slot, SQLITE_IOERR_WRITE);
        if (mode == FH_FAULT_FULL) return fault(f->slot, SQLITE_FULL);
    }
    return f->base->pMethods->xWrite(f->base, buffer, amount, offset);
}

static int f_truncate(sqlite3_file *file, sqlite3_int64 size) {
    fault_file *f = (fault_file *)file;
    return f->base->pMethods->xTruncate(f->base, size);
}

static int f_sync(sqlite3_file *file, int flags) {
    fault_file *f = (fault_file *)file;
    if (f->slot && atomic_load(&f->slot->mode) == FH_FAULT_SYNC) return fault(f->slot, SQLITE_IOERR_FSYNC);
    return f->base->pMethods->xSync(f->base, flags);
}

static int f_file_size(sqlite3_file *file, sqlite3_int64 *size) {
    fault_file *f = (fault_file *)file;
    return f->base->pMethods->xFileSize(f->base, size);
}

static int f_lock(sqlite3_file *file, int lock) {
    fault_file *f = (fault_file *)file;
    return f->base->pMethods->xLock(f->base, lock);
}

static int f_unlock(sqlite3_file *file, int lock) {
    fault_file *f = (fault_file *)file;
    return f->base->pMethods->xUnlock(f->base, lock);
}

static int f_check_reserved_lock(sqlite3_file *file, int *out) {
    fault_file *f = (fault_file *)file;
    return f->base->pMethods->xCheckReservedLock(f->base, out);
}

static int f_file_control(sqlite3_file *file, int op, void *argument) {
    fault_file *f = (fault_file *)file;
    return f->base->pMethods->xFileControl(f->base, op, argument);
}

static int f_sector_size(sqlite3_file *file) {
    fault_file *f = (fault_file *)file;
    return f->base->pMethods->xSectorSize(f->base);
}

static int f_device_characteristics(sqlite3_file *file) {
    fault_file *f = (fault_file *)file;
    return f->base->pMethods->xDeviceCharacteristics(f->base);
}

static int f_shm_map(sqlite3_file *file, int region, int size, int extend, void volatile **out) {
    fault_file *f = (fault_file *)file;
    return f->base->pMethods->xShmMap(f->base, region, size, extend, out);
}

static int f_shm_lock(sqlite3_file *file, int offset, int count, int flags) {
    fault_file *f = (fault_file *)file;
    return f->base->pMethods->xShmLock(f->base, offset, count, flags);
}

static void f_shm_barrier(sqlite3_file *file) {
    fault_file *f = (fault_file *)file;
    f->base->pMethods->xShmBarrier(f->base);
}

static int f_shm_unmap(sqlite3_file *file, int delete_flag) {
    fault_file *f = (fault_file *)file;
    return f->base->pMethods->xShmUnmap(f->base, delete_flag);
}

static int f_fetch(sqlite3_file *file, sqlite3_int64 offset, int amount, void **out) {
    fault_file *f = (fault_file *)file;
    // No memory-mapped pages: every read goes through xRead, so nothing bypasses the wrapper.
    (void)f, (void)offset, (void)amount;
    *out = NULL;
    return SQLITE_OK;
}

static int f_unfetch(sqlite3_file *file, sqlite3_int64 offset, void *page) {
    (void)file, (void)offset, (void)page;
    return SQLITE_OK;
}

static const sqlite3_io_methods fault_methods = {
    3,
    f_close,
    f_read,
    f_write,
    f_truncate,
    f_sync,
    f_file_size,
    f_lock,
    f_unlock,
    f_check_reserved_lock,
    f_file_control,
    f_sector_size,
    f_device_characteristics,
    f_shm_map,
    f_shm_lock,
    f_shm_barrier,
    f_shm_unmap,
    f_fetch,
    f_unfetch,
};

static int f_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *file, int flags, int *out_flags) {
    (void)vfs;
    fault_file *f = (fault_file *)file;
    memset(f, 0, sizeof(fault_file));
    f->base = (sqlite3_file *)(f + 1);
    if (name && (flags & (SQLITE_OPEN_MAIN_DB | SQLITE_OPEN_WAL | SQLITE_OPEN_MAIN_JOURNAL)) != 0) {
        const char *slash = strrchr(name, '/');
        if (slash) f->slot = slot_for(name, (size_t)(slash - name), 1);
    }
    int rc = base_vfs->xOpen(base_vfs, name, f->base, flags, out_flags);
    f->header.pMethods = rc == SQLITE_OK && f->base->pMethods ? &fault_methods : NULL;
    return rc;
}

static int f_delete(sqlite3_vfs *vfs, const char *name, int sync_dir) {
    (void)vfs;
    return base_vfs->xDelete(base_vfs, name, sync_dir);
}

static int f_access(sqlite3_vfs *vfs, const char *name, int flags, int *out) {
    (void)vfs;
    return base_vfs->xAccess(base_vfs, name, flags, out);
}

static int f_full_pathname(sqlite3_vfs *vfs, const char *name, int size, char *out) {
    (void)vfs;
    return base_vfs->xFullPathname(base_vfs, name, size, out);
}

static void *f_dl_open(sqlite3_vfs *vfs, const char *name) {
    (void)vfs;
    return base_vfs->xDlOpen(base_vfs, name);
}

static void f_dl_error(sqlite3_vfs *vfs, int size, char *out) {
    (void)vfs;
    base_vfs->xDlError(base_vfs, size, out);
}

static void (*f_dl_sym(sqlite3_vfs *vfs, void *handle, const char *symbol))(void) {
    (void)vfs;
    return base_vfs->xDlSym(base_vfs, handle, symbol);
}

static void f_dl_close(sqlite3_vfs *vfs, void *handle) {
    (void)vfs;
    base_vfs->xDlClose(base_vfs, handle);
}

static int f_randomness(sqlite3_vfs *vfs, int size, char *out) {
    (void)vfs;
    return base_vfs->xRandomness(base_vfs, size, out);
}

static int f_sleep(sqlite3_vfs *vfs, int microseconds) {
    (void)vfs;
    return base_vfs->xSleep(base_vfs, microseconds);
}

static int f_current_time(sqlite3_vfs *vfs, double *out) {
    (void)vfs;
    return base_vfs->xCurrentTime(base_vfs, out);
}

static int f_get_last_error(sqlite3_vfs *vfs, int size, char *out) {
    (void)vfs;
    return base_vfs->xGetLastError ? base_vfs->xGetLastError(base_vfs, size, out) : 0;
}

static int f_current_time_int64(sqlite3_vfs *vfs, sqlite3_int64 *out) {
    (void)vfs;
    return base_vfs->xCurrentTimeInt64(base_vfs, out);
}

static pthread_once_t registration = PTHREAD_ONCE_INIT;
static int registration_result = SQLITE_ERROR;

static void register_once(void) {
    base_vfs = sqlite3_vfs_find(NULL);
    if (base_vfs == NULL) return;
    memset(&fault_vfs, 0, sizeof(fault_vfs));
    fault_vfs.iVersion = 2;
    fault_vfs.szOsFile = (int)sizeof(fault_file) + base_vfs->szOsFile;
    fault_vfs.mxPathname = base_vfs->mxPathname;
    fault_vfs.zName = fh_faults_vfs_name;
    fault_vfs.xOpen = f_open;
    fault_vfs.xDelete = f_delete;
    fault_vfs.xAccess = f_access;
    fault_vfs.xFullPathname = f_full_pathname;
    fault_vfs.xDlOpen = f_dl_open;
    fault_vfs.xDlError = f_dl_error;
    fault_vfs.xDlSym = f_dl_sym;
    fault_vfs.xDlClose = f_dl_close;
    fault_vfs.xRandomness = f_randomness;
    fault_vfs.xSleep = f_sleep;
    fault_vfs.xCurrentTime = f_current_time;
    fault_vfs.xGetLastError = f_get_last_error;
    fault_vfs.xCurrentTimeInt64 = f_current_time_int64;
    registration_result = sqlite3_vfs_register(&fault_vfs, 0);
}

int fh_faults_register(void) {
    pthread_once(&registration, register_once);
    return registration_result;
}

void fh_faults_set(const char *directory, fh_fault_mode mode) {
    fault_slot *slot = slot_for(directory, strlen(directory), 1);
    if (slot) atomic_store(&slot->mode, (int)mode);
}

long long fh_faults_injected(const char *directory) {
    fault_slot *slot = slot_for(directory, strlen(directory), 0);
    return slot ? atomic_load(&slot->injected) : 0;
}
