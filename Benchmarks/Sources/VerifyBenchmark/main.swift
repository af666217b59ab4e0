import Dispatch
import FeedbackJSON
import Foundation
import Logging
import SessionJournal
import SystemKit
import Systems

// verify throughput (issue 22): writes a journal of SESSIONS counter sessions × EVENTS events each, as the service's
// recorder writes them (every event stamped with its time and the checksum of the state it produced, a snapshot every
// INTERVAL revisions, journal.history.snapshots 2), then the caller times `feedback-host verify` on it.
//   VerifyBenchmark populate DIRECTORY SESSIONS EVENTS [INTERVAL]
//   VerifyBenchmark stamp COUNT      ns per event of the recorder's state checksum (encode + FNV-1a) of a counter
//                                    state and of a paging state holding 50 items

let logger = Logger(label: "verify-bench") { _ in SwiftLogNoOpLogHandler() }
let arguments = CommandLine.arguments
if arguments.count == 3, arguments[1] == "stamp", let count = Int(arguments[2]) {
    func measure<S: FeedbackSystem>(_ system: S.Type, _ state: S.State, _ name: String) {
        var sink: UInt64 = 0
        let start = ContinuousClock.now
        for _ in 0..<count { sink &+= StateChecksum.of(S.encodeState(state)) }
        let elapsed = ContinuousClock.now - start
        let nanoseconds = Double(elapsed.components.seconds) * 1e9 + Double(elapsed.components.attoseconds) / 1e9
        let bytes = S.encodeState(state).count
        print("\(name): \(Int(nanoseconds / Double(count))) ns per state checksum (\(bytes) bytes) [\(sink % 10)]")
    }
    measure(CounterSystem.self, CounterSystem.State(count: 123_456), "counter")
    var paging = PagingSystem().initialState
    PagingSystem.reduce(&paging, .search(query: "swift"))
    let items = (0..<50).map { index in
        JSONValue.object(["name": .string("repository \(index)"), "stars": .int(Int64(index * 37))])
    }
    let url = "http://127.0.0.1:8080/demo/catalog?q=swift"
    PagingSystem.reduce(&paging, .pageLoaded(PagingSystem.Page(url: url, items: items, next: url + "&c=2", total: 500)))
    measure(PagingSystem.self, paging, "paging")
    exit(0)
}
guard arguments.count >= 5, arguments[1] == "populate", let sessions = Int(arguments[3]), let events = Int(arguments[4])
else {
    print("usage: VerifyBenchmark populate DIRECTORY SESSIONS EVENTS [INTERVAL]")
    exit(2)
}
let directory = arguments[2]
let interval = arguments.count > 5 ? UInt64(arguments[5]) ?? 100 : 100

func sessionID(_ number: Int) -> String {
    let digits = String(number)
    return String(repeating: "A", count: 21 - digits.count) + digits + "A"
}

let journal = try Journal.open(
    directory: directory,
    configuration: JournalConfiguration(fsync: .interval(milliseconds: 1000), compactionIntervalMilliseconds: 0)
        .keepingHistory(2),
    logger: logger
)
let encoder = JSONEncoder()
let start = ContinuousClock.now
var random = UInt64(22)
var pending: [JournalRecord] = []
let done = DispatchGroup()
for number in 0..<sessions {
    let id = sessionID(number)
    var state = CounterSystem().initialState
    pending.append(
        .created(
            SessionCreation(
                id: id,
                system: "counter",
                epoch: 1,
                state: String(decoding: CounterSystem.encodeState(state), as: UTF8.self),
                createdAt: 1.7e9
            )
        )
    )
    for revision in 1...UInt64(events) {
        random = random &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        let event: CounterSystem.Event =
            switch random >> 61 {
            case 0: .decrement
            case 1, 2, 3: .increment
            default: .add(amount: Int(random >> 40 & 0xFF) - 128)
            }
        CounterSystem.reduce(&state, event)
        let bytes = CounterSystem.encodeState(state)
        let stamp = EventStamp(
            version: 1,
            time: 1_767_225_600_000 + Int64(revision) * 1000,
            stateChecksum: StateChecksum.of(bytes)
        )
        pending.append(
            .event(
                sessionID: id,
                revision: revision,
                event: String(decoding: try encoder.encode(event), as: UTF8.self),
                origin: .client,
                stamp: stamp
            )
        )
        if revision % interval == 0 {
            pending.append(.snapshot(sessionID: id, revision: revision, state: String(decoding: bytes, as: UTF8.self)))
        }
    }
    if pending.count >= 50_000 || number == sessions - 1 {
        done.enter()
        journal.append(pending) { result in
            guard case .success = result else { fatalError("append failed: \(result)") }
            done.leave()
        }
        pending = []
        if number % 10_000 == 9_999 { done.wait() }
    }
}
done.wait()
journal.close()
let seconds = Double((ContinuousClock.now - start).components.seconds)
print("populated \(sessions) sessions × \(events) events in \(Int(seconds)) s")
