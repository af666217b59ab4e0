/// The clock settings (`--clock` and `clock.*`, docs/API.md "A clock tests move"); `Setting.service` lists them.
extension Setting {
    /// `system`, `manual` or `skip`. A build made with `-DFEEDBACKHOST_NO_MANUAL_CLOCK` (the container image's)
    /// refuses the last two.
    static let clock = Setting(
        "clock",
        .choice(["system", "manual", "skip"]),
        default: "system",
        "system: timers follow the real time; manual: they follow a clock that moves only on POST /v1/clock/advance "
            + "(local test instances); skip: manual, and the clock jumps to the next deadline whenever all is idle",
        check: { value in
            #if FEEDBACKHOST_NO_MANUAL_CLOCK
            if value != "system" {
                return "available in this build (the container image's, built without the manual clock); "
                    + "run a build of the sources (make run) for tests that move time"
            }
            #endif
            return nil
        }
    )
    static let clockStart = Setting(
        "clock.start.ms",
        .integer(0...253_402_300_799_999),
        default: "0",
        "with a manual clock, its first time in milliseconds since 1970 (0: the real time at the first start); "
            + "a journal keeps the time across restarts"
    )
    static let clockSettle = Setting(
        "clock.settle.ms",
        .integer(1...600_000),
        default: "10000",
        "with a manual clock, how long an advance waits (real time) for effects under way (upstream fetches) to "
            + "end before it moves on regardless and says so"
    )
}
