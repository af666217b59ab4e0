import Foundation
import Glibc

/// One process per data directory: an exclusive `flock` on `<directory>/LOCK`, held for as long as the journal is
/// open, with the holder's pid written in the file so that a refused process can name it.
///
/// The kernel releases the lock when the holder exits however it exits (SIGKILL included), so a stale lock file
/// never blocks a restart. SQLite's exclusive locking mode (see `JournalStore`) backs it on the database file.
///
/// Concurrency: made and released by whoever opens and closes the journal; the descriptor is not shared.
final class DataDirectoryLock {
    /// The lock file's name inside the data directory.
    static let fileName = "LOCK"
    private var descriptor: Int32

    /// Takes the lock; throws `.locked` naming the holder's pid when another process (or another open journal of
    /// this process) holds it, `.directory` when the file cannot be made.
    init(directory: String) throws(JournalError) {
        let path = directory + "/" + Self.fileName
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            throw JournalError(.directory, "cannot open \(path): \(String(cString: strerror(errno)))")
        }
        guard Self.take(descriptor) else {
            let holder = Self.holder(descriptor)
            Glibc.close(descriptor)
            throw JournalError(
                .locked,
                "the data directory \(directory) is in use by another feedback-host (\(holder.map { "pid \($0)" } ?? "pid unknown")); "
                    + "stop it, or give this one another --data-dir: two servers on one journal lose acknowledged writes"
            )
        }
        let pid = Array("\(getpid())\n".utf8)
        _ = ftruncate(descriptor, 0)
        _ = pwrite(descriptor, pid, pid.count, 0)
        self.descriptor = descriptor
    }

    /// Takes the `flock`. While the file names this process as its holder, tries again for up to a second: a journal
    /// this process closed a moment ago can still hold it through a child being spawned meanwhile, which shares the
    /// lock's open file until it runs its program (`O_CLOEXEC` closes it only then). Another process, or a journal
    /// this process still has open, is refused after that second.
    private static func take(_ descriptor: Int32) -> Bool {
        if flock(descriptor, LOCK_EX | LOCK_NB) == 0 { return true }
        var tries = 0
        while holder(descriptor) == getpid(), tries < 100 {
            usleep(10_000)
            if flock(descriptor, LOCK_EX | LOCK_NB) == 0 { return true }
            tries += 1
        }
        return false
    }

    /// The pid the holder wrote, if it reads as one.
    private static func holder(_ descriptor: Int32) -> Int32? {
        var buffer = [UInt8](repeating: 0, count: 32)
        let count = pread(descriptor, &buffer, buffer.count, 0)
        guard count > 0 else { return nil }
        let text = String(decoding: buffer[..<count], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return Int32(text)
    }

    /// Releases the lock (closing the descriptor releases the `flock`); the file stays for the next holder.
    func release() {
        guard descriptor >= 0 else { return }
        Glibc.close(descriptor)
        descriptor = -1
    }

    deinit { release() }
}
