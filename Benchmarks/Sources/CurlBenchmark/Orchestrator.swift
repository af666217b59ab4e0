import Foundation

/// Starts the server, then per round runs each client in a fresh child process (order alternating) and prints
/// the medians.
struct Orchestrator {
    let total: Int
    let concurrency: Int
    let rounds: Int

    func run() throws {
        let executable = URL(fileURLWithPath: CommandLine.arguments[0])
        let server = Process()
        server.executableURL = executable
        server.arguments = ["serve"]
        let serverOut = Pipe()
        let serverIn = Pipe()
        server.standardOutput = serverOut
        server.standardInput = serverIn
        try server.run()
        let portLine = String(decoding: serverOut.fileHandleForReading.availableData, as: UTF8.self)
        guard let port = Int(portLine.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            fatalError("server did not print a port: \(portLine)")
        }
        print(
            "CurlBenchmark: \(total) GETs of a \(BenchmarkServer.body.count)-byte JSON page, \(concurrency) in flight,"
        )
        print(
            "local thread-per-connection server on 127.0.0.1:\(port) (separate process), \(rounds) interleaved rounds"
        )
        var results: [String: [ClientRun]] = [:]
        for round in 0..<rounds {
            let order = round % 2 == 0 ? ["curl", "urlsession"] : ["urlsession", "curl"]
            for client in order {
                let run = try runClient(executable: executable, client: client, port: port)
                results[client, default: []].append(run)
                print(
                    String(
                        format: "round %d %@ %8.0f req/s  peak threads %3d  RSS %6d KiB  peak RSS %6d KiB  failures %d",
                        round + 1,
                        (client == "curl" ? "CurlClient" : "URLSession") as NSString,
                        run.requestsPerSecond,
                        run.peakThreads,
                        run.rssKiB,
                        run.peakRssKiB,
                        run.failures
                    )
                )
            }
        }
        try? serverIn.fileHandleForWriting.close()
        server.terminate()
        server.waitUntilExit()
        print("")
        print("| client | req/s (median) | peak threads (median) | RSS KiB (median) | peak RSS KiB (median) |")
        print("|---|---|---|---|---|")
        for client in ["curl", "urlsession"] {
            let runs = results[client] ?? []
            let name = client == "curl" ? "CurlClient" : "URLSession"
            print(
                "| \(name) | \(Int(median(runs.map(\.requestsPerSecond)))) | \(Int(median(runs.map { Double($0.peakThreads) }))) "
                    + "| \(Int(median(runs.map { Double($0.rssKiB) }))) | \(Int(median(runs.map { Double($0.peakRssKiB) }))) |"
            )
        }
        let curl = median((results["curl"] ?? []).map(\.requestsPerSecond))
        let session = median((results["urlsession"] ?? []).map(\.requestsPerSecond))
        print(String(format: "\nthroughput ratio CurlFetcher / URLSession: %.2f", curl / session))
    }

    private func runClient(executable: URL, client: String, port: Int) throws -> ClientRun {
        let process = Process()
        process.executableURL = executable
        process.arguments = ["client", client, String(port), String(total), String(concurrency)]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let line = String(decoding: data, as: UTF8.self).split(separator: "\n").last.map(String.init) ?? ""
        guard let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
            fatalError("client \(client) printed no result: \(line)")
        }
        return ClientRun(
            client: client,
            requests: object["requests"] as? Int ?? 0,
            seconds: object["seconds"] as? Double ?? .nan,
            peakThreads: object["peakThreads"] as? Int ?? 0,
            rssKiB: object["rssKiB"] as? Int ?? 0,
            peakRssKiB: object["peakRssKiB"] as? Int ?? 0,
            failures: object["failures"] as? Int ?? 0
        )
    }

    private func median(_ values: [Double]) -> Double {
        guard !values.isEmpty else { return .nan }
        let sorted = values.sorted()
        return sorted[sorted.count / 2]
    }
}
