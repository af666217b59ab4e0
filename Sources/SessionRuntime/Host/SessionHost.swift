import Dispatch
package import Metrics
import SessionJournal
package import Synchronization
package import SystemKit

/// The hosted sessions of one server, whatever answers for them: the store, the journal, the systems, the memory
/// budget and the metrics, and the logic of creating, activating, passivating, re-anchoring, waking, retiring and
/// deleting sessions. It knows no HTTP: the API (`SessionService`) parses requests, calls it and renders what it
/// returns or throws. The streams above it are reached through `SessionFollowing`; looking inside sessions (history,
/// states, the list, export, forks, verification) is SessionInspection's, in extensions of it a layer up.
///
/// Thread-safe: methods run on any thread (shard queues, Tasks, the journal's writer queue); the session store and
/// each session's loop carry their own locks, and passivations and activations take turns under `activation`.
package final class SessionHost: Sendable {
    package let limits: SessionLimits
    package let systems: [String: HostedSystem]
    package let systemOrder: [String]
    package let store: SessionStore
    /// Each new or restored session's environment: its system's, plus the service's reduce timer.
    let environment: @Sendable (SessionID) -> SessionEnvironment
    package let metrics: ServiceMetrics
    /// The memory all sessions hold together (`sessions.max.bytes`), and the per-state limit.
    package let budget: SessionBudget
    /// The journal, when sessions are durable (`--data-dir`); nil when they live only in memory.
    package let persistence: SessionPersistence?
    /// Fingerprints `Idempotency-Key` bodies: keyed with the journal's key when there is one, so that fingerprints
    /// restored after a restart still compare, else with a random one.
    let fingerprints: any BodyFingerprinting
    /// What follows sessions from above (their streams): a followed session is never idle, and a session that ends
    /// ends its streams.
    let followers: any SessionFollowing
    private let draining = Atomic<Bool>(false)
    /// Why `/readyz` fails besides draining and the journal (a verification running or failed); nil for nothing.
    package let readinessHold = Mutex<APIError?>(nil)
    /// Passivations and activations take turns under it, so a session is never read back from the journal while
    /// its passivated copy could still append: see `activeSession` and `expireIdleSessions`.
    let activation = Mutex(())
    /// Spaces the first upstream fetches of activated sessions (`session.activation.rate`).
    let activationThrottle: ActivationThrottle
    /// The containment's counters, shared by every session's guard.
    package let containmentMetrics: ContainmentMetrics

    /// Creates the host with its systems; `environment` gives each new session its clock, upstream and logger.
    package init(
        limits: SessionLimits,
        systems: [HostedSystem],
        metricsFactory: any MetricsFactory,
        persistence: SessionPersistence?,
        followers: any SessionFollowing,
        fingerprints makeFingerprints: (_ key: [UInt8]) -> any BodyFingerprinting,
        environment: @escaping @Sendable (SessionID) -> SystemEnvironment
    ) {
        self.persistence = persistence
        fingerprints = makeFingerprints(
            persistence?.journal.fingerprintKey ?? (0..<16).map { _ in UInt8.random(in: 0...255) }
        )
        self.limits = limits
        self.followers = followers
        var byName: [String: HostedSystem] = [:]
        for system in systems {
            precondition(byName[system.name] == nil, "two systems are named \(system.name)")
            byName[system.name] = system
        }
        self.systems = byName
        systemOrder = systems.map(\.name)
        store = SessionStore(capacity: limits.maxActiveSessions)
        let metrics = ServiceMetrics(factory: metricsFactory)
        self.metrics = metrics
        activationThrottle = ActivationThrottle(rate: limits.activationRate, waits: metrics.activationFetchWait)
        let budget = SessionBudget(
            limit: limits.maxSessionBytes,
            stateLimit: limits.maxStateBytes,
            gauge: metrics.sessionBytes
        )
        self.budget = budget
        metrics.sessionBytesLimit.record(Double(limits.maxSessionBytes))
        let containmentMetrics = ContainmentMetrics(factory: metricsFactory)
        self.containmentMetrics = containmentMetrics
        // Before any session can be activated: what the last process died inside is quarantined.
        if let persistence { persistence.quarantineLeftBehind(persistence.marks) }
        let slowLane = SlowLane()
        let marks = persistence?.marks ?? .disabled
        let policy = limits.containment
        self.environment = { id in
            let system = environment(id)
            let containment = SessionGuard(
                session: id.description,
                policy: policy,
                metrics: containmentMetrics,
                logger: system.logger,
                slowLane: slowLane,
                marks: marks
            )
            return SessionEnvironment(
                system: system,
                reduceTimer: metrics.reduceDuration,
                budget: budget,
                containment: containment,
                eventsApplied: metrics.eventsApplied
            )
        }
        persistence?.onHealed { [weak self] in self?.reanchorFencedSessions() }
        persistence?.onSuperseded { [weak self] id in self?.dropSuperseded(id) }
    }

    /// Whether the service is shutting down: `/readyz` fails and no new session starts.
    package var isDraining: Bool { draining.load(ordering: .relaxed) }

    /// Marks the service as shutting down, so load balancers stop sending it new work.
    package func beginDraining() {
        draining.store(true, ordering: .relaxed)
    }

    /// Passivates (with a journal) or ends (without) the sessions idle for longer than `session.idle.ms`, checking
    /// every quarter of it, until the task that runs this is cancelled. A session with an open stream is not idle.
    package func expireIdleSessions() async {
        let idle = limits.sessionIdle
        let idleNanoseconds =
            UInt64(idle.components.seconds) * 1_000_000_000
            + UInt64(idle.components.attoseconds / 1_000_000_000)
        while !Task.isCancelled {
            do {
                try await Task.sleep(for: max(idle / 4, .milliseconds(10)))
            } catch {
                return
            }
            let now = DispatchTime.now().uptimeNanoseconds
            guard now > idleNanoseconds else { continue }
            // A watched session is never idle: its stream hub stays in the registry while a stream is open (and
            // for the linger after the last one), and touches the session when it leaves.
            if persistence != nil {
                // Under the activation lock: an activation of one of them waits until its copy here is sealed.
                activation.withLock { _ in
                    for session in store.removeIdle(before: now - idleNanoseconds, sparing: followers.isFollowing) {
                        session.passivate()
                        metrics.sessions.decrement()
                        metrics.sessionsPassive.increment()
                        metrics.sessionsPassivated.increment()
                    }
                }
                continue
            }
            for session in store.removeIdle(before: now - idleNanoseconds, sparing: followers.isFollowing) {
                session.stop()
                followers.end(session.id, reason: .expired)
                metrics.sessions.decrement()
                metrics.sessionsExpired.increment()
            }
        }
    }

    /// Stops every session: effects are cancelled, streams closed.
    package func stopAll() {
        // With a journal, each session is passivated: its snapshot and the mark that nothing follows it are the
        // last thing it journals, so after the restart it is read back by its keys alone.
        for session in store.removeAll() {
            if persistence != nil { session.passivate() } else { session.stop() }
            followers.end(session.id, reason: nil)
            metrics.sessions.decrement()
        }
    }
}
