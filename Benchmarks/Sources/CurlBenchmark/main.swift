// CurlBenchmark: FeedbackHost's CurlFetcher against FoundationNetworking's URLSession, same run, same local server.
//
//   CurlBenchmark [requests] [concurrency] [rounds]   orchestrate: start the server, run both clients per round
//   CurlBenchmark serve                                the local JSON server (a child process)
//   CurlBenchmark client curl|urlsession PORT N C      one measured run (a child process), prints one JSON line
//
// Each client runs in its own child process so that its threads and RSS are its own.
import Foundation

#if canImport(Glibc)
import Glibc
#endif

let arguments = CommandLine.arguments
switch arguments.dropFirst().first {
case "serve":
    BenchmarkServer.run()
case "client":
    guard arguments.count == 6, let port = Int(arguments[3]), let total = Int(arguments[4]),
        let concurrency = Int(arguments[5])
    else { fatalError("usage: CurlBenchmark client curl|urlsession PORT N C") }
    let result = await ClientRun.measure(
        client: arguments[2],
        url: "http://127.0.0.1:\(port)/page",
        total: total,
        concurrency: concurrency
    )
    print(result.jsonLine)
default:
    let total = arguments.count > 1 ? Int(arguments[1]) ?? 10_000 : 10_000
    let concurrency = arguments.count > 2 ? Int(arguments[2]) ?? 64 : 64
    let rounds = arguments.count > 3 ? Int(arguments[3]) ?? 3 : 3
    try Orchestrator(total: total, concurrency: concurrency, rounds: rounds).run()
}
