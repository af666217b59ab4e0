@_exported public import SessionAuth
// What a user of the library imports with `FeedbackService` alone: the runtime's public types (`SessionID`,
// `HostedSystem`, `ServiceClock`, the verifier) are declared a layer down. As Hummingbird re-exports HummingbirdCore.
@_exported public import SessionRuntime
@_exported public import SessionStreams
