import FeedbackJSON
public import HTTPServer
import SessionRuntime
import SystemKit

/// The routes of a server whose clock tests move (`--clock manual` or `skip`): `GET /v1/clock` and
/// `POST /v1/clock/advance`, over the runtime's clock control (`SessionHost+Clock`). Without the option they are not
/// registered (404).
extension SessionService {
    /// Adds `GET /v1/clock` and `POST /v1/clock/advance` over `clock` to `router`.
    public func registerClock(_ clock: ServiceClock, in router: inout Router) {
        register(
            [
                APIRoute(
                    .get,
                    "/v1/clock",
                    nil,
                    .now { [self] _, _ in Response.json(host.clockState(clock).serialized()) }
                ),
                APIRoute(
                    .post,
                    "/v1/clock/advance",
                    maxBodySize: 4096,
                    nil,
                    .later { [self] request, _, responder in
                        Task { [self] in
                            do throws(APIError) {
                                let target = try Self.advanceTarget(request, clock: clock)
                                responder.respond(
                                    .success(Response.json(try await host.advanceClock(clock, target).serialized()))
                                )
                            } catch {
                                responder.respond(.failure(error))
                            }
                        }
                    }
                ),
            ],
            in: &router
        )
    }

    /// What a `POST /v1/clock/advance` body asks for: `{"milliseconds": N}` from now, or `{"to": T}` (milliseconds
    /// since 1970; a time already passed moves nothing).
    static func advanceTarget(_ request: Request, clock: ServiceClock) throws(APIError) -> SessionHost.ClockTarget {
        let example =
            #"{"milliseconds": 1000} or {"to": \#(min(clock.now().millisecondsSince1970 + 1000, SessionHost.latestClockTime))}"#
        guard case .object(let members) = try jsonBody(request), members.count == 1 else {
            throw APIError(.invalidRequest, "the body is a JSON object with one member: \(example)")
        }
        let tenYears: Int64 = 10 * 366 * 24 * 3600 * 1000
        /// A whole number, written as JSON Schema counts integers (`1000.0` is one).
        func whole(_ value: JSONValue?) -> JSONValue? {
            if case .double(let number)? = value, let exact = Int64(exactly: number) { return .int(exact) }
            return value
        }
        switch (whole(members["milliseconds"]), whole(members["to"])) {
        case (.int(let milliseconds)?, nil):
            guard milliseconds >= 0, milliseconds <= tenYears else {
                throw APIError(
                    .invalidRequest,
                    "\"milliseconds\" is how far to move the clock forward, from 0 to \(tenYears) (ten years); "
                        + "got \(milliseconds)"
                )
            }
            return .by(.milliseconds(milliseconds))
        case (nil, .int(let to)?):
            // A time the clock has passed moves nothing, as when another advance passed it first.
            guard to >= 0, to <= SessionHost.latestClockTime else {
                throw APIError(
                    .invalidRequest,
                    "\"to\" is milliseconds since 1970, from 0 to \(SessionHost.latestClockTime) (the end of the year 9999); "
                        + "got \(to)"
                )
            }
            return .to(WallTime(millisecondsSince1970: to))
        default:
            throw APIError(
                .invalidRequest,
                "say how far as whole milliseconds, either \"milliseconds\" (from now) or \"to\" (since 1970): "
                    + example
            )
        }
    }
}
