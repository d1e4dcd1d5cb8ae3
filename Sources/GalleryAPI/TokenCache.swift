import Foundation
import Store
import TopRegionsKit

/// Which user each bearer token names, kept in memory so that a request, a stream's batch
/// or its heartbeat needs no store read to know. Only tokens that named a user are kept
/// (as many as there are users); a wrong one is looked up each time, on a worker.
///
/// Renewed when users change (a token rotated, a user removed, in any process): every
/// kept token is looked up again, off the polling threads, and those that no longer name
/// their user are dropped; then `renewed` runs (which ends the streams they opened).
///
/// `@unchecked Sendable`: `users` and `generation` are guarded by `lock`.
final class TokenCache: @unchecked Sendable {
    private let lock = NSLock()
    private var users: [String: GalleryUser] = [:]
    /// Bumped when users change: a lookup begun before must not be kept.
    private var generation = 0
    private let gallery: any GalleryServing
    private let renewals = DispatchQueue(label: "topregions.api.tokens")
    private var observation: StoreObservation?

    /// Follows `gallery`'s user changes; `renewed` runs after each renewal.
    init(gallery: any GalleryServing, renewed: @escaping @Sendable () -> Void) {
        self.gallery = gallery
        observation = gallery.observeUserChanges { [weak self] in
            guard let self else { return }
            lock.withLock { generation += 1 }
            renewals.async { [weak self] in
                self?.renew()
                renewed()
            }
        }
    }

    /// The user `token` names, from memory only; nil when not known here.
    func cachedUser(for token: String) -> GalleryUser? {
        lock.withLock { users[token] }
    }

    /// The user `token` names: from memory, else read from the store (needs `access` to
    /// allow it) and kept.
    ///
    /// A lookup that users changed during is made again (a few times at most): the user
    /// returned must be kept, or the stream it opens would be ended at its first heartbeat
    /// (`stillNames`).
    func user(for token: String, access: StoreAccess) throws -> GalleryUser? {
        if let known = cachedUser(for: token) { return known }
        try access.require()
        var user: GalleryUser?
        for _ in 0..<Self.lookupAttempts {
            let seen = lock.withLock { generation }
            guard let found = try gallery.authenticate(token: token) else { return nil }
            user = found
            let kept = lock.withLock { () -> Bool in
                guard generation == seen else { return false }
                users[token] = found
                return true
            }
            if kept { break }
        }
        return user
    }

    /// Lookups made for one token while users keep changing, before the last is answered
    /// without being kept.
    static let lookupAttempts = 5

    /// Whether `token` still names the user with `userID`, from memory: a token dropped by
    /// a renewal no longer does.
    func stillNames(_ token: String, userID: Int64) -> Bool {
        cachedUser(for: token)?.id == userID
    }

    /// Looks every kept token up again; one that cannot be read now is kept as it was (a
    /// store that is down revokes no one).
    private func renew() {
        let kept = lock.withLock { users }
        var renewed: [String: GalleryUser] = [:]
        for (token, user) in kept {
            do {
                if let current = try gallery.authenticate(token: token) { renewed[token] = current }
            } catch {
                renewed[token] = user
            }
        }
        lock.withLock {
            // Tokens learnt meanwhile were looked up after the change: they stay.
            for (token, user) in users where kept[token] == nil { renewed[token] = user }
            users = renewed
        }
    }

    func close() {
        observation?.cancel()
        observation = nil
    }
}
