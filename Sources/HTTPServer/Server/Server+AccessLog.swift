public import Logging

extension Server {
    /// Creates a server that writes one line per answered request to `accessLog`; nothing is bound until `start()`.
    public convenience init(
        configuration: HTTPServerConfiguration,
        router: Router,
        logger: Logger,
        accessLog: AccessLog?
    ) {
        self.init(configuration: configuration, router: router, logger: logger)
        core.accessLog = accessLog
    }

    /// The access log given at creation, if any.
    public var accessLog: AccessLog? { core.accessLog }
}
