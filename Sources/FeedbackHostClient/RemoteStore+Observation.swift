public import Observation
public import SystemKit

/// What a screen observes: each property's read is told to the store's `ObservationRegistrar` and each change wraps
/// in its `withMutation`, as `@Observable` generates, with key paths the store made once (`Keys`).
extension RemoteStore: Observable {
    /// The observed values' storage.
    struct Observed {
        var state: System.State
        var confirmed: Confirmed
        var pending: [Pending] = []
        var connection: Connection = .connecting
        var mispredictions = 0
        var predicting = true
        var lastRefusal: HostClientError?
        var clientID: String
    }

    /// The observed properties' key paths, made once per store.
    @MainActor struct Keys {
        let state: KeyPath<RemoteStore, System.State> = \.state
        let confirmed: KeyPath<RemoteStore, Confirmed> = \.confirmed
        let pending: KeyPath<RemoteStore, [Pending]> = \.pending
        let connection: KeyPath<RemoteStore, Connection> = \.connection
        let mispredictions: KeyPath<RemoteStore, Int> = \.mispredictions
        let predicting: KeyPath<RemoteStore, Bool> = \.predicting
        let lastRefusal: KeyPath<RemoteStore, HostClientError?> = \.lastRefusal
        let clientID: KeyPath<RemoteStore, String> = \.clientID
    }

    private func read<Member>(_ key: KeyPath<RemoteStore, Member>, _ value: Member) -> Member {
        registrar.access(self, keyPath: key)
        return value
    }

    private func change<Member>(_ key: KeyPath<RemoteStore, Member>, _ body: (inout Observed) -> Void) {
        registrar.withMutation(of: self, keyPath: key) { body(&observed) }
    }

    /// The predicted state: `confirmed.state` with `pending` reduced on it (or `confirmed.state` once prediction
    /// stopped).
    public internal(set) var state: System.State {
        get { read(keys.state, observed.state) }
        set { change(keys.state) { $0.state = newValue } }
    }

    /// The server's latest.
    public internal(set) var confirmed: Confirmed {
        get { read(keys.confirmed, observed.confirmed) }
        set { change(keys.confirmed) { $0.confirmed = newValue } }
    }

    /// Events sent and not yet confirmed, oldest first.
    public internal(set) var pending: [Pending] {
        get { read(keys.pending, observed.pending) }
        set { change(keys.pending) { $0.pending = newValue } }
    }

    /// How the store reaches the server.
    public internal(set) var connection: Connection {
        get { read(keys.connection, observed.connection) }
        set { change(keys.connection) { $0.connection = newValue } }
    }

    /// Predictions the confirmed state contradicted (and a schema hash that differs); prediction stops at the first.
    public internal(set) var mispredictions: Int {
        get { read(keys.mispredictions, observed.mispredictions) }
        set { change(keys.mispredictions) { $0.mispredictions = newValue } }
    }

    /// Whether `state` is predicted (false after a misprediction).
    public internal(set) var predicting: Bool {
        get { read(keys.predicting, observed.predicting) }
        set { change(keys.predicting) { $0.predicting = newValue } }
    }

    /// The last refusal of one of this store's events (a 4xx): that event was dropped, the others stay.
    public internal(set) var lastRefusal: HostClientError? {
        get { read(keys.lastRefusal, observed.lastRefusal) }
        set { change(keys.lastRefusal) { $0.lastRefusal = newValue } }
    }

    /// This store's `Client-ID`: a new one when the server forgot the old (409 `client-unknown`).
    public internal(set) var clientID: String {
        get { read(keys.clientID, observed.clientID) }
        set { change(keys.clientID) { $0.clientID = newValue } }
    }
}
