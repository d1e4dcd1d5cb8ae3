// A child process for the sync's crash tests, and for tests that need a commit no command
// makes.
//
//   gallery-fixture STORE PLACES PHOTOS
//   gallery-fixture sql STORE STATEMENT…   each statement in one transaction, through the
//                                          store (so every observer hears of it)
//   gallery-fixture sql-lines STORE        each line of standard input as a statement, in a
//                                          transaction of its own; "committed" after each
//
// Syncs the generated pages in PLACES (resolving every place), then the pages in PHOTOS in
// one pass that loads them in bulk after its first 1,000 new photos, printing a line after
// each ("places", "synced RESULT"). The parent kills it part way through the second pass.
import Flickr
import Foundation
import Store
import TopRegionsKit

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data(("gallery-fixture: " + message + "\n").utf8))
    exit(2)
}

func report(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

let arguments = CommandLine.arguments
if arguments.count >= 4, arguments[1] == "sql" {
    do {
        let store = try Store(path: arguments[2], schema: TopRegionsSchema.schema, migrator: TopRegionsSchema.migrator)
        try store.write { transaction in
            for statement in arguments.dropFirst(3) { try transaction.execute(statement) }
        }
        store.close()
        report("committed")
        exit(0)
    } catch {
        fail("\(error)")
    }
}
if arguments.count == 3, arguments[1] == "sql-lines" {
    do {
        let store = try Store(path: arguments[2], schema: TopRegionsSchema.schema, migrator: TopRegionsSchema.migrator)
        while let statement = readLine() {
            try store.write { try $0.execute(statement) }
            report("committed")
        }
        store.close()
        exit(0)
    } catch {
        fail("\(error)")
    }
}
guard arguments.count == 4 else { fail("usage: gallery-fixture STORE PLACES PHOTOS, or gallery-fixture sql STORE STATEMENT…") }
do {
    let gallery = try Gallery(path: arguments[1])
    let places = try SampleDataTransport(directory: URL(fileURLWithPath: arguments[2]))
    _ = try await gallery.sync(client: FlickrClient(configuration: FlickrConfiguration(), transport: places))
    report("places")
    var options = SyncOptions(pages: 200, perPage: 500)
    options.overlap = 100 * 365 * 86_400
    options.bulkLoadMinimumPhotos = 1_000
    let photos = try SampleDataTransport(directory: URL(fileURLWithPath: arguments[3]))
    let result = try await gallery.sync(client: FlickrClient(configuration: FlickrConfiguration(), transport: photos), options: options)
    report("synced \(result.outcome.rawValue)")
    gallery.close()
} catch {
    fail("\(error)")
}
