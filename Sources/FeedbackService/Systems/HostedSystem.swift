import Foundation

/// A registered system with its types erased: what the service lists and starts sessions of.
public struct HostedSystem: Sendable {
    /// The system's name.
    public let name: String
    /// The entry of `GET /v1/systems`.
    let description: JSONValue
    private let start:
        @Sendable (SessionID, UInt64, JSONValue?, Int, SystemEnvironment) throws(APIError) -> any HostedSession

    /// Wraps a system.
    public init<System: FeedbackSystem>(_ system: System) {
        name = system.name
        let examples = system.exampleEvents.compactMap { try? JSONValue(encoding: $0) }
        let initial = (try? JSONValue(encoding: system.initialState)) ?? .null
        description = .object([
            "name": .string(system.name),
            "description": .string(system.summary),
            "initialState": initial,
            "clientEvents": .array(system.clientEventTypes.map { .string($0) }),
            "exampleEvents": .array(examples),
        ])
        start = { id, epoch, state, inboxCapacity, environment throws(APIError) in
            var initialState = system.initialState
            if let state {
                do {
                    initialState = try state.decode(System.State.self)
                } catch {
                    throw APIError(
                        .invalidRequest,
                        "\"state\" is not a state of \(system.name): \(SystemEvents.describe(error)); "
                            + "GET /v1/systems shows its initial state"
                    )
                }
            }
            return SystemSession(
                id: id,
                system: system,
                epoch: epoch,
                state: initialState,
                inboxCapacity: inboxCapacity,
                environment: environment
            )
        }
    }

    /// Starts a session of this system from `state` (its initial state when nil).
    func startSession(
        id: SessionID,
        epoch: UInt64,
        state: JSONValue?,
        inboxCapacity: Int,
        environment: SystemEnvironment
    ) throws(APIError) -> any HostedSession {
        try start(id, epoch, state, inboxCapacity, environment)
    }
}
