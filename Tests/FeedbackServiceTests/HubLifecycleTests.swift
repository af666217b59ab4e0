import Testing

@testable import FeedbackService

/// The stream hub's life without a hub: every phase, and what a subscriber, a linger, an end and a drain do in it.
struct HubLifecycleTests {
    @Test func theFirstSubscriberStartsFollowingAndLaterOnesJoin() {
        var lifecycle = HubLifecycle()
        #expect(lifecycle.subscribe() == .add(follow: true))
        #expect(lifecycle.phase == .following)
        #expect(lifecycle.subscribe() == .add(follow: false))
    }

    @Test func aLingerThatEndsUndisturbedRetiresTheHub() {
        var lifecycle = HubLifecycle()
        _ = lifecycle.subscribe()
        let linger = lifecycle.lastSubscriberLeft()
        #expect(linger != nil)
        let retires = lifecycle.lingerEnded(linger!)
        #expect(retires)
        #expect(lifecycle.phase == .retired)
        #expect(lifecycle.subscribe() == .handOver)
    }

    @Test func aStreamDuringTheLingerKeepsTheHubAndAnOldLingerDoesNothing() {
        var lifecycle = HubLifecycle()
        _ = lifecycle.subscribe()
        let first = lifecycle.lastSubscriberLeft()!
        #expect(lifecycle.subscribe() == .add(follow: false))
        let staleWhileFollowing = lifecycle.lingerEnded(first)
        #expect(!staleWhileFollowing)
        #expect(lifecycle.phase == .following)
        let second = lifecycle.lastSubscriberLeft()!
        #expect(second != first)
        let staleWhileLingering = lifecycle.lingerEnded(first)
        let current = lifecycle.lingerEnded(second)
        #expect(!staleWhileLingering)
        #expect(current)
    }

    @Test func anEndedHubRefusesWithItsReasonOnceAndForAll() {
        var lifecycle = HubLifecycle()
        _ = lifecycle.subscribe()
        let ends = lifecycle.end(.deleted)
        let endsAgain = lifecycle.end(.expired)
        #expect(ends)
        #expect(!endsAgain)
        #expect(lifecycle.isEnded)
        #expect(lifecycle.subscribe() == .refuse(.deleted))
        #expect(lifecycle.lastSubscriberLeft() == nil)
        lifecycle.drain()
        #expect(lifecycle.phase == .ended(.deleted))
    }

    @Test func aHubWhoseSessionMovedAwaySendsLateStreamsAfterIt() {
        var lifecycle = HubLifecycle()
        _ = lifecycle.subscribe()
        let ends = lifecycle.end(.moved)
        #expect(ends)
        #expect(lifecycle.subscribe() == .refuse(.moved))
    }

    @Test func theServersEndClosesWithoutAReason() {
        var lifecycle = HubLifecycle()
        let ends = lifecycle.end(nil)
        #expect(ends)
        #expect(lifecycle.subscribe() == .refuse(nil))
    }

    @Test func aDrainingHubTakesNoStreamAndDoesNotLingerButCanStillEnd() {
        var lifecycle = HubLifecycle()
        _ = lifecycle.subscribe()
        lifecycle.drain()
        #expect(lifecycle.subscribe() == .refuse(nil))
        #expect(lifecycle.lastSubscriberLeft() == nil)
        #expect(!lifecycle.isEnded)
        let ends = lifecycle.end(.expired)
        #expect(ends)
        #expect(lifecycle.subscribe() == .refuse(.expired))
    }

    @Test func aRetiredHubEndsWhenItsSessionDoes() {
        var lifecycle = HubLifecycle()
        _ = lifecycle.subscribe()
        let linger = lifecycle.lastSubscriberLeft()!
        let retires = lifecycle.lingerEnded(linger)
        let ends = lifecycle.end(.deleted)
        #expect(retires && ends)
        #expect(lifecycle.subscribe() == .refuse(.deleted))
    }
}
