import Configuration
import FeedbackService
import Systems

/// The systems `feedback-host` serves (and `verify` replays).
func builtInSystems(_ reader: ConfigReader) -> [HostedSystem] {
    [
        HostedSystem(CounterSystem()),
        HostedSystem(CatchSystem()),
        HostedSystem(TrafficLightSystem()),
        HostedSystem(PagingSystem(configuration: PagingConfiguration(reader: reader))),
    ]
}
