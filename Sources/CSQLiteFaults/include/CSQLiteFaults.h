#ifndef FEEDBACKHOST_CSQLITEFAULTS_H
#define FEEDBACKHOST_CSQLITEFAULTS_H

/// A SQLite VFS for tests that wraps the default one and makes the journal's writes or syncs fail on command, as
/// SQLite's own tests inject I/O errors. Only the files a journal writes (the database, its WAL and rollback
/// journal) are affected; the shared-memory index and temporary files are passed through. Faults are switched per
/// directory, so that tests running at once in one process, each in a directory of its own, do not disturb each
/// other.

/// What the next writes or syncs do.
typedef enum {
    /// Everything is passed to the default VFS.
    FH_FAULT_NONE = 0,
    /// Every write fails with SQLITE_IOERR_WRITE (a disk error, EIO).
    FH_FAULT_WRITE = 1,
    /// Every sync fails with SQLITE_IOERR_FSYNC (the kernel could not write the dirty pages back).
    FH_FAULT_SYNC = 2,
    /// Every write fails with SQLITE_FULL (ENOSPC).
    FH_FAULT_FULL = 3,
} fh_fault_mode;

/// Registers the VFS under `fh_faults_vfs_name` (not as the default); safe to call more than once. Returns a
/// SQLite result code.
int fh_faults_register(void);

/// The name to open a database with (`sqlite3_open_v2`'s last argument).
extern const char *const fh_faults_vfs_name;

/// Switches the fault for the files directly in `directory` (a path without a trailing slash, as the journal was
/// opened with) on or off; takes effect at the next write or sync, from any thread. At most 64 directories.
void fh_faults_set(const char *directory, fh_fault_mode mode);

/// How many writes and syncs failed on purpose so far in `directory`.
long long fh_faults_injected(const char *directory);

#endif
