import Foundation
import PostgresStore
import Store

/// A store of the test schema of either kind, for the tests that run on both: a SQLite
/// file, or a fresh database of the tests' PostgreSQL server. `location` is its path or URL.
public final class TestStoreOfKind {
    public let store: any ObservableStore
    public let location: String
    private let temporary: TemporaryDirectory?
    private let close: () -> Void

    public init(_ kind: StoreKind) throws {
        switch kind {
        case .sqlite:
            let temporary = try TemporaryDirectory("rc-tests")
            location = temporary.path("store.sqlite")
            let store = try TestSchema.openStore(at: location)
            (self.store, self.temporary, close) = (store, temporary, { store.close() })
        case .postgresql:
            location = try PostgresTestServer.shared().makeDatabase("rc")
            let database = try PostgresStore(location: location, schema: TestSchema.postgres)
            try database.migrate()
            let store = try PostgresRecordStore(database)
            (self.store, temporary, close) = (store, nil, { store.close() })
        }
    }

    private init(store: any ObservableStore, location: String, close: @escaping () -> Void) {
        (self.store, self.location, temporary, self.close) = (store, location, nil, close)
    }

    /// A second store object on the same store, as another process has it: its own
    /// connections and origin; on SQLite polling every 10 ms.
    public func another() throws -> TestStoreOfKind {
        if store is Store {
            var configuration = StoreConfiguration()
            configuration.observationInterval = 0.01
            let other = try TestSchema.openStore(at: location, configuration: configuration)
            return TestStoreOfKind(store: other, location: location) { other.close() }
        }
        let other = try PostgresRecordStore(try PostgresStore(location: location, schema: TestSchema.postgres))
        return TestStoreOfKind(store: other, location: location) { other.close() }
    }

    deinit { close() }
}
