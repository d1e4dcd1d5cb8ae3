import Foundation
import ResultsController
import Store
import TopRegionsKit

/// Prints a live list: a snapshot, then one line per batch (JSON), or a table redrawn in
/// place on a terminal.
final class WatchPrinter: ResultsControllerDelegate, @unchecked Sendable {
    let output: Output
    let row: (IndexPath) -> Any
    let columns: (IndexPath) -> [String]
    let headers: [String]
    private let lock = NSLock()
    private var batches = 0
    var onBatch: (@Sendable (Int) -> Void)?
    weak var controller: AnyObject?
    var sectionsProvider: () -> [(name: String, value: SectionValue, count: Int)] = { [] }

    /// A section's value in JSON: null, a number or a string.
    static func json(_ value: SectionValue) -> Any {
        switch value.value {
        case .null: return NSNull()
        case .integer(let number): return number
        case .real(let number): return number
        case .text, .blob: return value.name
        }
    }

    init(output: Output, headers: [String], row: @escaping (IndexPath) -> Any, columns: @escaping (IndexPath) -> [String]) {
        self.output = output
        self.headers = headers
        self.row = row
        self.columns = columns
    }

    func printSnapshot() {
        if output.json {
            output.emit(["type": "snapshot", "sections": sectionsProvider().enumerated().map { index, section in
                ["name": section.name, "value": Self.json(section.value),
                 "rows": (0..<section.count).map { row(IndexPath(row: $0, section: index)) }] as [String: Any]
            }] as [String: Any])
        } else {
            redraw()
        }
    }

    private func redraw() {
        var rows: [[String]] = []
        for (index, section) in sectionsProvider().enumerated() {
            if !section.name.isEmpty { rows.append(["— \(section.name) —"] + Array(repeating: "", count: headers.count - 1)) }
            rows += (0..<section.count).map { columns(IndexPath(row: $0, section: index)) }
        }
        output.write(output.isTerminal ? "\u{1B}[H\u{1B}[2J" : "")
        output.table(headers, rows)
    }

    func controllerDidChangeContent(_ controller: AnyObject, _ change: ResultsChange) {
        let batch = change.batch
        if output.json {
            func path(_ indexPath: IndexPath) -> [Any] { [indexPath.section, indexPath.row] }
            output.emit([
                "type": "batch",
                "sectionDeletes": batch.sectionDeletes,
                "sectionInserts": batch.sectionInserts.map { insert in
                    ["index": insert.index, "name": insert.section.name, "value": Self.json(insert.section.value),
                     "rows": insert.section.ids.indices.map { row(IndexPath(row: $0, section: insert.index)) }] as [String: Any]
                },
                "deletes": batch.rowDeletes.map { path($0.indexPath) },
                "inserts": batch.rowInserts.map { path($0.indexPath) + [row($0.indexPath)] },
                "moves": batch.moves.map { path($0.from) + path($0.to) + [row($0.to)] },
                "updates": batch.updates.map { path($0.old) + path($0.new) + [row($0.new)] },
            ] as [String: Any])
        } else {
            redraw()
        }
        lock.lock()
        batches += 1
        let count = batches
        lock.unlock()
        onBatch?(count)
    }
}

extension Commands {
    static let watch = Command(name: "watch", abstract: "Show a list live as it changes (also changes made by other processes).",
                               usage: "watch regions|recents|favorites|photos --region X [--exit-after N]",
                               options: ["--region NAME|ID   for photos: the region", "--exit-after N     stop after N batches",
                                         "--limit N          for regions: how many (default: 50)"],
                               example: "topregions watch regions --json") { context in
        let exitAfter = try context.arguments.option("exit-after").map { text -> Int in
            guard let count = Int(text), count > 0 else { throw UsageError("--exit-after must be a positive number, not \"\(text)\"") }
            return count
        }
        let regionName = try context.arguments.option("region")
        let limit = try context.arguments.integer("limit", default: 50, range: 1...10_000)
        let base = try imageBase(&context)
        let list = try context.arguments.positionals(1...1, "what to watch (regions, recents, favorites or photos)")[0]
        let gallery = try context.openGallery(.read)
        defer { gallery.close() }
        let output = context.output
        let printer: WatchPrinter
        let keepAlive: AnyObject
        switch list {
        case "regions":
            let controller = try gallery.topRegionsController(limit: limit)
            printer = WatchPrinter(output: output, headers: ["#", "REGION", "COUNTRY", "PHOTOGRAPHERS", "PHOTOS"], row: { path in
                guard let region = try? controller.object(at: path) else { return NSNull() }
                return ["rank": path.row + 1, "id": region.placeID, "name": region.name, "country": region.country ?? NSNull(),
                        "photographers": region.photographerCount, "photos": region.photoCount] as [String: Any]
            }, columns: { path in
                guard let region = try? controller.object(at: path) else { return ["", "", "", "", ""] }
                return ["\(path.row + 1)", region.name, region.country ?? "", "\(region.photographerCount)", "\(region.photoCount)"]
            })
            controller.delegate = printer
            printer.sectionsProvider = { controller.sections.map { ($0.name, $0.value, $0.numberOfObjects) } }
            try controller.performFetch()
            keepAlive = controller
        case "recents", "favorites", "photos":
            let controller: ResultsController<PhotoRecord>
            if list == "photos" {
                guard let regionName else { throw UsageError("watch photos needs --region NAME|ID") }
                controller = try gallery.regionPhotosController(regionID: try resolveRegion(regionName, in: gallery).id ?? -1)
            } else {
                controller = list == "recents" ? try gallery.recentsController() : try gallery.favoritesController()
            }
            let summarize: (IndexPath) -> PhotoSummary? = { path in
                guard let record = try? controller.object(at: path) else { return nil }
                return (try? gallery.summaries([record], imageBase: base))?.first
            }
            printer = WatchPrinter(output: output, headers: ["ID", "TITLE", "PHOTOGRAPHER"], row: { path in
                guard let photo = summarize(path) else { return NSNull() }
                switch list {
                case "favorites": return ["position": path.row + 1, "id": photo.flickrID, "title": photo.title] as [String: Any]
                case "recents":
                    let viewed = (try? gallery.store.read { try $0.scalar("SELECT lastViewed FROM Recent WHERE photo_id = ?", [.integer(photo.id)]) })??.double
                    return ["id": photo.flickrID, "title": photo.title, "subtitle": photo.subtitle,
                            "lastViewed": viewed.map { Date(timeIntervalSince1970: $0).iso8601 } ?? NSNull()] as [String: Any]
                default: return photoJSON(photo)
                }
            }, columns: { path in
                guard let photo = summarize(path) else { return ["", "", ""] }
                return [photo.flickrID, photo.title, photo.photographer ?? ""]
            })
            controller.delegate = printer
            printer.sectionsProvider = { controller.sections.map { ($0.name, $0.value, $0.numberOfObjects) } }
            try controller.performFetch()
            keepAlive = controller
        default:
            throw UsageError("watch takes regions, recents, favorites or photos, not \"\(list)\"")
        }
        printer.printSnapshot()
        // Wait for the batches asked for, or a signal.
        let finished = DispatchSemaphore(value: 0)
        printer.onBatch = { count in if let exitAfter, count >= exitAfter { finished.signal() } }
        let signals = SignalEvents { event in if event == .stop { finished.signal() } }
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                finished.wait()
                continuation.resume()
            }
        }
        withExtendedLifetime((signals, keepAlive, printer)) {}
        return 0
    }
}
