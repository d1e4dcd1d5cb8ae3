// A child process for the store's crash and multi-process tests.
//
//   store-fixture-writer crash PATH|URL        write batches until killed (a PostgreSQL URL:
//                                               into the test schema's PostgreSQL store)
//   store-fixture-writer write PATH COUNT [PAUSE_MS]
//                                               write COUNT batches, then exit
//   store-fixture-writer bulk PATH             build what an earlier run left deferred,
//                                               then defer Photo's indexes, load photos,
//                                               build them, over and over until killed
//   store-fixture-writer random PATH SEED NAME for each line "commit N" on stdin, commit N
//                                               random transactions (RandomTransactions),
//                                               then print "done TOKEN"; ends at EOF
//
// After each commit it writes "committed BATCH TOKEN UNIXTIME" on stdout, unbuffered, so
// the parent knows which transactions were committed before it killed the process.
import Foundation
import PostgreSQL
import PostgresStore
import Store
import TestSupport

func report(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data(("store-fixture-writer: " + message + "\n").utf8))
    exit(2)
}

/// Writes one batch: `partsPerBatch` entries with the same batch number, with payloads of
/// varied length so that pages split and the WAL grows.
func writeBatch(_ store: any StoreWriting, _ batch: Int64) throws {
    try store.write { transaction in
        for part in 0..<Int64(TestSchema.partsPerBatch) {
            let length = Int.random(in: 10...3000)
            try transaction.inserted(Entry(batch: batch, part: part, payload: String(repeating: "x", count: length)))
        }
    }
}

/// Writes batches into the PostgreSQL store at `location` until killed (its tables created
/// first when missing), reporting each as the SQLite writer does (token 0: no history).
func crashPostgres(_ location: String) throws -> Never {
    let database = try PostgresStore(location: location, schema: TestSchema.postgres)
    try database.migrate()
    let store = try PostgresRecordStore(database)
    var batch = try store.read { (try $0.scalar("SELECT max(batch) FROM Entry")?.int64 ?? 0) + 1 }
    while true {
        try writeBatch(store, batch)
        report("committed \(batch) 0 \(Date().timeIntervalSince1970)")
        batch += 1
    }
}

/// The PostgreSQL store of the test schema at `location` (made when missing).
func openPostgres(_ location: String) throws -> PostgresRecordStore {
    let database = try PostgresStore(location: location, schema: TestSchema.postgres)
    try database.migrate()
    return try PostgresRecordStore(database)
}

/// Commits random transactions (`RandomTransactions`, seeded by the arguments) when told
/// on standard input (`commit N`), answering `done TOKEN` after each order; ends with it.
func commitRandomly(_ store: any ObservableStore) throws -> Never {
    guard arguments.count >= 5, let seed = UInt64(arguments[3]) else { fail("random needs a SEED and a NAME") }
    var transactions = RandomTransactions(seed: seed, writer: arguments[4])
    while let line = readLine() {
        let words = line.split(separator: " ")
        guard words.count == 2, words[0] == "commit", let count = Int(words[1]) else { fail("unknown command \(line)") }
        for _ in 0..<count { try store.write { try transactions.transaction($0) } }
        report("done \(try store.currentToken())")
    }
    exit(0)
}

/// Inserts 200 photos in one transaction, their Flickr ids from `batch`.
func loadPhotos(_ store: Store, _ batch: Int64) throws {
    try store.write { transaction in
        for part in 0..<200 {
            var photo = Photo(flickrID: "\(batch)-\(part)", title: "Photo \(Int.random(in: 1...100_000))")
            try transaction.insert(&photo)
        }
    }
}

func nextBatch(_ store: Store) throws -> Int64 {
    try store.read { context in (try context.scalar("SELECT max(batch) FROM Entry")?.int64 ?? 0) + 1 }
}

let arguments = CommandLine.arguments
guard arguments.count >= 3 else { fail("usage: store-fixture-writer crash|write PATH [COUNT [PAUSE_MS]]") }
let mode = arguments[1]
let path = arguments[2]
do {
    if mode == "crash", PostgresLocation.isURL(path) { try crashPostgres(path) }
    if mode == "random", PostgresLocation.isURL(path) { try commitRandomly(try openPostgres(path)) }
    let store = try TestSchema.openStore(at: path)
    var batch = try nextBatch(store)
    switch mode {
    case "crash":
        while true {
            try writeBatch(store, batch)
            report("committed \(batch) \(try store.currentToken()) \(Date().timeIntervalSince1970)")
            batch += 1
        }
    case "write":
        guard arguments.count >= 4, let count = Int(arguments[3]) else { fail("write needs a COUNT") }
        let pause = arguments.count >= 5 ? (Double(arguments[4]) ?? 0) / 1000 : 0
        for _ in 0..<count {
            try writeBatch(store, batch)
            report("committed \(batch) \(try store.currentToken()) \(Date().timeIntervalSince1970)")
            batch += 1
            if pause > 0 { Thread.sleep(forTimeInterval: pause) }
        }
    case "bulk":
        // Each load commits 200 photos whole: the committed loads are count / 200.
        batch = try store.read { (try $0.scalar("SELECT count(*) FROM Photo")?.int64 ?? 0) / 200 + 1 }
        try store.buildDeferredIndexes()
        while true {
            try store.deferIndexes(of: TestSchema.photo)
            report("deferred")
            for _ in 0..<5 {
                try loadPhotos(store, batch)
                report("loaded \(batch)")
                batch += 1
            }
            try store.buildDeferredIndexes()
            report("built")
        }
    case "random":
        try commitRandomly(store)
    default:
        fail("unknown mode \(mode)")
    }
} catch {
    fail("\(error)")
}
