/// Told when each effect of a loop starts and ends: what a clock that tests move (``TestClock``) needs to know
/// that everything has settled, every effect either sleeping on it or finished.
///
/// Concurrency: `effectStarted()` is called on the engine owner's thread right before the effect's task starts;
/// `effectEnded()` from the effect's task, after its body returned (so after the events it sent were queued, and
/// reduced when its thread ran the loop's queue). Both may come from any thread.
public protocol EffectTracking: AnyObject, Sendable {
    /// An effect of a loop is about to start.
    func effectStarted()
    /// An effect's body returned or threw.
    func effectEnded()
}
