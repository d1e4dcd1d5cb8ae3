import Foundation
import Store
import TestSupport
import Testing

@Suite("Several processes on one store", .serialized)
struct CrossProcessTests {
    @Test("Commits of another process reach an observer as change sets, within 250 ms")
    func remoteCommitsObserved() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("store.sqlite")
        let store = try TestSchema.openStore(at: path)
        let log = EventLog()
        let observation = store.observe { log.append($0) }
        let child = try FixtureProcess(["write", path, "10", "100"])
        #expect(child.wait() == 0, "\(child.standardError)")
        #expect(eventually { log.committedEntries.count == 10 })
        let entries = log.committedEntries
        #expect(entries.allSatisfy { $0.origin != store.origin })
        #expect(entries.allSatisfy { $0.changes["Entry"].inserted.count == TestSchema.partsPerBatch })
        // In the child's order: its tokens, in turn (how fast is the benchmark's business).
        let childTokens = child.outputLines.compactMap { line -> Int64? in
            let fields = line.split(separator: " ")
            return fields.count == 4 ? Int64(fields[2]) : nil
        }
        #expect(entries.map(\.token) == childTokens)
        // The local process's own commits are delivered once, as local, at once.
        try store.write { try $0.inserted(Region(name: "local")) }
        let localEvents = log.events.filter { if case .committed(_, true) = $0 { return true } else { return false } }
        #expect(localEvents.count == 1)
        #expect(log.events.count == 11)
        observation.cancel()
    }

    @Test("Another process's commits wake an observer through inotify, without polling, and the method is named")
    func fileEventsWakeObservers() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("store.sqlite")
        var configuration = StoreConfiguration()
        configuration.observationInterval = 3_600  // a poll would come far too late to pass
        let store = try TestSchema.openStore(at: path, configuration: configuration)
        #expect(store.observationDescription == "inotify")
        let log = EventLog()
        let observation = store.observe { log.append($0) }
        defer { observation.cancel() }
        for round in 1...20 {
            let child = try FixtureProcess(["write", path, "1", "1"])
            #expect(child.wait() == 0, "\(child.standardError)")
            #expect(eventually(timeout: 10) { log.committedEntries.count == round }, "commit \(round) was not noticed")
        }
        #expect(log.committedEntries.allSatisfy { $0.origin != store.origin })

        configuration.observationMethod = .polling
        let polling = try TestSchema.openStore(at: path, configuration: configuration)
        #expect(polling.observationDescription == "polling every 3600000 ms")
    }

    @Test("The commit counter changes with every commit, this process's or another's, and only then")
    func commitCounterFollowsCommits() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("store.sqlite")
        let store = try TestSchema.openStore(at: path)
        #expect(store.commitCounterReadsSharedMemory, "a WAL store's counter reads the WAL-index")
        var seen = store.commitCounter()
        for _ in 0..<3 { #expect(store.commitCounter() == seen, "no commit, no change") }
        try store.write { try $0.inserted(Region(name: "local")) }
        #expect(store.commitCounter() != seen, "this store's own commit")
        seen = store.commitCounter()
        for round in 1...20 {
            let child = try FixtureProcess(["write", path, "1", "1"])
            #expect(child.wait() == 0, "\(child.standardError)")
            let now = store.commitCounter()
            #expect(now != seen, "another process's commit \(round), as soon as it returned")
            seen = now
        }
    }

    @Test("An observer that falls behind trimmed history is told to refetch")
    func remoteGapReported() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("store.sqlite")
        var configuration = StoreConfiguration()
        configuration.observationInterval = 0.5
        configuration.observationMethod = .polling
        let observer = try TestSchema.openStore(at: path, configuration: configuration)
        let log = EventLog()
        let observation = observer.observe { log.append($0) }
        // Another store object (as another process would) writes and trims at once,
        // before the observer polls.
        let other = try TestSchema.openStore(at: path)
        try other.write { try $0.inserted(Region(name: "missed")) }
        try other.trimHistory(before: Date().addingTimeInterval(1))
        #expect(eventually {
            log.events.contains { if case .historyGap = $0 { return true } else { return false } }
        })
        observation.cancel()
    }

    @Test("A writer in another process and four reader threads here never see SQLITE_BUSY")
    func concurrentReadersAndWriters() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("store.sqlite")
        let store = try TestSchema.openStore(at: path)
        let errors = LockedValue<[String]>([])
        let reads = LockedValue(0)
        let writersDone = LockedValue(false)
        let group = DispatchGroup()
        for _ in 0..<4 {
            // Threads of their own: under a loaded suite, queued work might start only
            // after the child had finished, and then nothing would have read beside it.
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                repeat {
                    do {
                        let batches = try store.read { context in
                            try context.rows("SELECT batch, count(*) FROM Entry GROUP BY batch")
                        }
                        // A reader never sees half a transaction.
                        if batches.contains(where: { $0[1].int64 != Int64(TestSchema.partsPerBatch) }) {
                            errors.mutate { $0.append("partial batch visible") }
                        }
                        reads.mutate { $0 += 1 }
                    } catch {
                        errors.mutate { $0.append("\(error)") }
                    }
                } while !writersDone.value
            }
        }
        defer { writersDone.mutate { $0 = true } }  // a failed start must not leave them reading
        // The child starts once the readers are reading, so they overlap its writes.
        #expect(eventually(timeout: 60) { reads.value >= 4 })
        let readsBeforeChild = reads.value
        let child = try FixtureProcess(["write", path, "300"])
        // And this process writes too, competing with the child for the write lock.
        var localWrites = 0
        repeat {
            do {
                try store.write { try $0.inserted(Region(name: "local \(localWrites)")) }
                localWrites += 1
            } catch {
                errors.mutate { $0.append("\(error)") }
            }
        } while child.process.isRunning
        #expect(child.wait() == 0, "\(child.standardError)")
        let readsBesideChild = reads.value - readsBeforeChild
        writersDone.mutate { $0 = true }
        group.wait()
        #expect(errors.value.isEmpty, "\(errors.value.prefix(3))")
        #expect(readsBesideChild > 0)
        #expect(localWrites > 0)
        let total = try store.read { try $0.count(FetchRequest(Entry.self)) }
        #expect(total == 300 * TestSchema.partsPerBatch)
    }

    @Test("Two processes writing at once take turns; every transaction of both lands")
    func twoWritingProcesses() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("store.sqlite")
        _ = try TestSchema.openStore(at: path)
        let first = try FixtureProcess(["write", path, "200"])
        let second = try FixtureProcess(["write", path, "200"])
        #expect(first.wait() == 0, "\(first.standardError)")
        #expect(second.wait() == 0, "\(second.standardError)")
        let store = try TestSchema.openStore(at: path)
        let rows = try store.read { try $0.count(FetchRequest(Entry.self)) }
        // Batch numbers may collide (both read the same max), but no row may be lost.
        #expect(rows == 400 * TestSchema.partsPerBatch)
        let history = try store.history(since: 0)
        #expect(history.count == 400)
        #expect(Set(history.map(\.origin)).count == 2)
    }
}
