import Flickr
import Foundation
import Store

/// Asks Flickr about the places not known yet (each once; permanent failures remembered),
/// then attaches their waiting photos to the regions found.
enum PlaceResolution {
    enum Answer {
        case region(RegionInfo)
        case permanentFailure
        case transientFailure(String)
    }

    struct Outcome: Sendable {
        var resolved = 0
        var failed = 0
        /// Places not asked about (or not answered) because the pass's time for lookups ran
        /// out; they stay pending for the next pass.
        var leftAtDeadline = 0
        /// Lookups that failed for a reason that may pass (they stay pending), and the first
        /// reason.
        var failedForNow = 0
        var firstFailure: String?
        /// Places not asked about because `failuresBeforeStopping` lookups in a row had
        /// failed for a reason that may pass (a server refusing them: 429, 105, 5xx); they
        /// stay pending for the next pass.
        var leftAfterFailures = 0
    }

    /// Lookups failing in a row (each after its retries) that stop the lookups for this
    /// pass: a server that refuses them all is not asked about every place.
    static let failuresBeforeStopping = 8

    /// `beforeCommit` runs last in the transaction that records the answers (the pass
    /// confirms it still holds its lock), and between lookups, at most once a second: a
    /// pass whose lock is gone asks nothing more of the server (another pass may be asking).
    static func resolvePending(in store: any StoreWriting, client: FlickrClient, options: SyncOptions,
                               beforeCommit: @escaping @Sendable () throws -> Void = {}) async throws -> Outcome {
        let pending = try await store.reading { context in
            try context.rows("SELECT placeID FROM Place WHERE status = 'pending' ORDER BY id").compactMap { $0[0].string }
        }
        guard !pending.isEmpty, !Task.isCancelled else { return Outcome() }
        let (answers, stoppedAfterFailures) = await ask(pending, client: client, concurrency: options.concurrentPlaceLookups,
                                                        deadline: options.placeLookupDeadline, progress: options.progress,
                                                        stillAllowed: { (try? beforeCommit()) != nil })
        let now = options.now()
        var outcome = try await store.writing { transaction in
            let outcome = try record(answers, askedAt: now, in: transaction)
            try beforeCommit()
            return outcome
        }
        if Task.isCancelled {
            // The pass was stopped (its result says so): the places not answered wait for
            // the next pass, neither for a deadline nor for failures.
        } else if stoppedAfterFailures {
            outcome.leftAfterFailures = pending.count - answers.count
        } else {
            outcome.leftAtDeadline = pending.count - answers.count
        }
        for case .transientFailure(let reason) in answers.values {
            outcome.failedForNow += 1
            outcome.firstFailure = outcome.firstFailure ?? reason
        }
        return outcome
    }

    /// Asks about the places, a few at a time, until all are answered, `deadline` seconds
    /// have passed, or `failuresBeforeStopping` lookups in a row failed for a reason that
    /// may pass (then true), or `stillAllowed` (asked before a lookup starts, at most once
    /// a second) says no: then the lookups still running are cancelled, and the places
    /// not answered are left out. Failures are answers too.
    private static func ask(_ placeIDs: [String], client: FlickrClient, concurrency: Int, deadline: TimeInterval,
                            progress: (@Sendable (SyncProgress) -> Void)?,
                            stillAllowed: @escaping @Sendable () -> Bool) async -> ([String: Answer], Bool) {
        await withTaskGroup(of: (String, Answer)?.self) { group in
            var answers: [String: Answer] = [:]
            var next = placeIDs.makeIterator()
            var allowedUntil = Date()
            var allowed = true
            func addNext() -> Bool {
                if allowed, Date() >= allowedUntil {
                    allowed = stillAllowed()
                    allowedUntil = Date().addingTimeInterval(1)
                }
                guard allowed, let placeID = next.next() else { return false }
                group.addTask {
                    do {
                        return (placeID, .region(try await client.placeInfo(placeID).regionInfo))
                    } catch let error as FlickrError where error.isPermanentForPlace {
                        return (placeID, .permanentFailure)
                    } catch is CancellationError {
                        return nil
                    } catch {
                        return Task.isCancelled ? nil : (placeID, .transientFailure("\(error)"))
                    }
                }
                return true
            }
            // The deadline: a task that ends the lookups when it wakes.
            group.addTask {
                try? await Task.sleep(nanoseconds: UInt64(max(0, min(deadline, 86_400)) * 1_000_000_000))
                return nil
            }
            var running = 0
            var failuresInARow = 0
            for _ in 0..<max(1, concurrency) where addNext() { running += 1 }
            while running > 0, let result = await group.next() {
                // Nil is the deadline waking (a lookup only gives nil once cancelled).
                guard let (placeID, answer) = result else { break }
                answers[placeID] = answer
                progress?(.places(answered: answers.count, of: placeIDs.count))
                running -= 1
                if case .transientFailure = answer { failuresInARow += 1 } else { failuresInARow = 0 }
                if failuresInARow >= failuresBeforeStopping {
                    group.cancelAll()
                    return (answers, answers.count < placeIDs.count)
                }
                if addNext() { running += 1 }
            }
            group.cancelAll()
            return (answers, false)
        }
    }

    private static func record(_ answers: [String: Answer], askedAt: Date, in transaction: Transaction) throws -> Outcome {
        var outcome = Outcome()
        let places = try transaction.fetch(PlaceRecord.self, whereColumn: "placeID", in: answers.keys.map { .text($0) })
        // Regions by their Flickr place id, created or renamed as Flickr says.
        var regionInfos: [String: (name: String, country: String?)] = [:]
        for case .region(.region(let id, let name, let country)) in answers.values {
            regionInfos[id] = (PhotoText.bounded(name, to: PhotoText.Limit.name), country.map { PhotoText.bounded($0, to: PhotoText.Limit.name) })
        }
        var renamedRegions: [Int64] = []
        let regions = try upsertRegions(regionInfos, renamed: &renamedRegions, in: transaction)
        var attach: [Int64: Int64] = [:]  // place row id → region row id
        for stored in places {
            var place = stored
            switch answers[place.placeID] {
            case .region(.region(let id, _, _)):
                place.status = .resolved
                place.regionID = regions[id]
                if let region = regions[id], let placeRow = place.id { attach[placeRow] = region }
                outcome.resolved += 1
            case .region(.noRegion):
                place.status = .noRegion
                outcome.resolved += 1
            case .permanentFailure:
                place.status = .failed
                outcome.failed += 1
            case .transientFailure, nil:
                continue
            }
            place.askedAt = askedAt
            try transaction.update(place, from: stored)
        }
        var shown: [Int64: (name: String, country: String?)] = [:]
        for (placeID, info) in regionInfos { if let row = regions[placeID] { shown[row] = info } }
        try attachWaitingPhotos(attach, regions: shown, in: transaction)
        // A renamed region's photos are found under its new name.
        try SearchIndex.refresh(regionIDs: renamedRegions, in: transaction)
        return outcome
    }

    private static func upsertRegions(_ infos: [String: (name: String, country: String?)], renamed: inout [Int64],
                                      in transaction: Transaction) throws -> [String: Int64] {
        var result: [String: Int64] = [:]
        let existing = try transaction.fetch(RegionRecord.self, whereColumn: "placeID", in: infos.keys.map { .text($0) })
        var byPlace: [String: RegionRecord] = [:]
        for region in existing { byPlace[region.placeID] = region }
        for (placeID, info) in infos {
            if let stored = byPlace[placeID] {
                var region = stored
                region.name = info.name
                region.country = info.country
                region.searchName = SearchIndex.regionColumn(name: info.name, country: info.country)
                try transaction.update(region, from: stored)
                if (region.name != stored.name || region.country != stored.country), let id = stored.id { renamed.append(id) }
                result[placeID] = region.id
            } else {
                result[placeID] = try transaction.inserted(RegionRecord(placeID: placeID, name: info.name, country: info.country)).id
            }
        }
        return result
    }

    /// Photos that waited for their place now join its region, counts and search terms included.
    private static func attachWaitingPhotos(_ regionOfPlace: [Int64: Int64], regions: [Int64: (name: String, country: String?)],
                                            in transaction: Transaction) throws {
        guard !regionOfPlace.isEmpty else { return }
        var memberships: [RegionCounts.Membership] = []
        for places in InList.paddedChunks(regionOfPlace.keys, size: 400) {
            let p = transaction.dialect.parameter
            let sql = """
                SELECT p.id, p.place_id, p.photographer_id, p.photoDescription, g.name FROM Photo p LEFT JOIN Photographer g ON g.id = p.photographer_id
                WHERE p.region_id IS NULL AND p.place_id IN (\((1...places.count).map(p).joined(separator: ", ")))
                """
            for row in try transaction.rows(sql, places.map { .integer($0) }) {
                guard let photo = row[0].int64, let place = row[1].int64, let region = regionOfPlace[place] else { continue }
                let text = SearchIndex.textColumn(description: row[3].string ?? "", photographer: row[4].string,
                                                  region: regions[region]?.name, country: regions[region]?.country ?? nil)
                try transaction.execute("UPDATE Photo SET region_id = \(p(1)), searchText = \(p(2)) WHERE id = \(p(3))",
                                        [.integer(region), .text(text), .integer(photo)])
                memberships.append(RegionCounts.Membership(region: region, photographer: row[2].int64))
            }
        }
        try RegionCounts.attach(memberships, in: transaction)
    }
}
