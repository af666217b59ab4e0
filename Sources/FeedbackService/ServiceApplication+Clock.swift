public import Configuration
public import Logging
import SystemKit

/// The clock keys (`clock`, `clock.start.ms`, `clock.settle.ms`): the server's `ServiceClock` when the sessions run
/// on a clock that tests move.
extension ServiceApplication {
    /// The manual clock `clock` asks for, nil for the real one (`system`, the default). Its time resumes from the
    /// data directory's `clock.json` when a previous run kept one there. A build made with
    /// `-DFEEDBACKHOST_NO_MANUAL_CLOCK` (the container image's) never makes one.
    public static func makeClock(_ reader: ConfigReader, logger: Logger) -> ServiceClock? {
        let name = reader.string(.clock)
        let directory = reader.string(.dataDirectory)
        let file = directory == "none" || directory.isEmpty ? nil : directory + "/clock.json"
        guard let mode = ServiceClock.Mode(rawValue: name) else {
            if let file, let kept = ServiceClock.savedTime(at: file) {
                logger.warning(
                    "the data directory was last served with a manual clock: its deadlines are in that clock's time",
                    metadata: ["clock.file": "\(file)", "clock.kept": "\(kept.millisecondsSince1970)"]
                )
            }
            return nil
        }
        #if FEEDBACKHOST_NO_MANUAL_CLOCK
        logger.error("clock \(mode.rawValue) refused: this build has no manual clock; the real clock is used")
        return nil
        #else
        let start = reader.int(.clockStart)
        let clock = ServiceClock(
            mode: mode,
            start: start > 0 ? WallTime(millisecondsSince1970: Int64(start)) : .now(),
            file: file,
            settleLimit: .milliseconds(reader.int(.clockSettle)),
            logger: logger
        )
        clock.save()
        let how = mode == .skip ? "POST /v1/clock/advance, or by itself when all is idle" : "POST /v1/clock/advance"
        logger.notice(
            "clock \(mode.rawValue): timers follow a clock that moves only on \(how); not for production",
            metadata: [
                "clock.now": "\(clock.now().millisecondsSince1970)",
                "clock.file": "\(file ?? "none (no journal)")",
            ]
        )
        return clock
        #endif
    }
}
