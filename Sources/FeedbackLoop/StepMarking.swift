/// Told by a loop where each step's system code runs: right before the reducer, and right after the feedbacks'
/// synchronous reactions to the new state, before the observers. A host keeps a note of the session there (a crash
/// mark), so that when the process dies inside a system's code the next start knows which session it was.
///
/// Called on the engine owner's thread; `stepStarted` under the loop's lock (it must only note, never call back into
/// the loop). The two calls of a step are on one thread, in pairs.
public protocol StepMarking: AnyObject, Sendable {
    /// The reducer is about to apply the event that makes `revision`.
    func stepStarted(revision: UInt64)
    /// The step's reduce and its feedbacks' synchronous reactions are done.
    func stepEnded()
}
