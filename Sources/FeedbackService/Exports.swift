@_exported public import SessionAuth
// What a user of the library imports with `FeedbackService` alone: the runtime's public types (`SessionID`,
// `HostedSystem`, `ServiceClock`) and the verifier's (`JournalVerifier`, `VerificationReport`) are declared a layer or
// two down. As Hummingbird re-exports HummingbirdCore.
@_exported public import SessionInspection
@_exported public import SessionRuntime
@_exported public import SessionStreams
